package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestChatDefaults(t *testing.T) {
	h := newBot(t, nil)
	c := h.bot.Chat()
	if c.progressEvery != time.Second || c.typingEvery != 4*time.Second {
		t.Errorf("progress every %v, typing every %v", c.progressEvery, c.typingEvery)
	}
}

// The progress message and the typing action run on the bubble's clock,
// with the real intervals.
func TestProgressMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, func(o *testOptions) { o.Redactor = replacer{strings.NewReplacer("s3cret", "[redacted]")} })
		c := h.bot.Chat()
		every := c.progressEvery
		a := c.StartActivity(context.Background(), chat.In(alice))
		synctest.Wait()
		if n := len(h.fake.RequestsFor("sendChatAction")); n != 1 {
			t.Fatalf("%d typing actions at the start, want 1", n)
		}
		if len(h.fake.Sent(alice)) != 0 {
			t.Fatal("a progress message before any tool call")
		}

		a.ToolCall("browser_navigate", json.RawMessage(`{"url":"https://example.com/docs/?token=s3cret"}`))
		synctest.Wait()
		msgs := h.fake.Sent(alice)
		if len(msgs) != 1 || msgs[0].Text != "🌐 browser_navigate example.com/docs?…" {
			t.Fatalf("progress %+v", msgs)
		}
		// A burst of calls makes one edit, not one per call, once `every`
		// has passed since the message was sent.
		a.ToolCall("echo", json.RawMessage(`{"message":"hi"}`))
		a.ToolCall("read_file", json.RawMessage(`{"path":"notes/s3cret.txt"}`))
		a.ToolCall("brave_web_search", json.RawMessage(`{"query":"volcanoes"}`))
		time.Sleep(every - time.Millisecond)
		if n := len(h.fake.RequestsFor("editMessageText")); n != 0 {
			t.Fatalf("%d edits before %v passed", n, every)
		}
		if _, err := h.fake.WaitFor("editMessageText", 1, waitLong); err != nil {
			t.Fatal(err)
		}
		time.Sleep(every / 2)
		a.ToolCall("send", json.RawMessage(`{"path":"page.png"}`))
		if _, err := h.fake.WaitFor("editMessageText", 2, waitLong); err != nil {
			t.Fatal(err)
		}
		// The typing action lasts ~5 s: it is renewed every typingEvery.
		if _, err := h.fake.WaitFor("sendChatAction", 2, waitLong); err != nil {
			t.Fatal(err)
		}
		a.Done()

		want := strings.Join([]string{
			"🌐 browser_navigate example.com/docs?…",
			"🔧 echo",
			"📄 read_file notes/[redacted].txt",
			"🔍 brave_web_search volcanoes",
			"📤 send page.png",
		}, "\n")
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || !sent[0].Deleted || sent[0].Text != want || sent[0].Edits() != 2 {
			t.Errorf("progress message %+v, want deleted, 2 edits, text\n%s", sent, want)
		}
		// Edits are at least `every` apart, the first one from the send.
		var times []time.Time
		for _, r := range h.fake.Requests() {
			if r.Method == "sendMessage" || r.Method == "editMessageText" {
				times = append(times, r.Time)
			}
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < every {
				t.Errorf("update %d came %v after the previous one, want >= %v", i, gap, every)
			}
		}
		var typing []time.Time
		for _, r := range h.fake.RequestsFor("sendChatAction") {
			if r.Params["action"] != "typing" || r.ChatID() != alice {
				t.Errorf("chat action %+v", r.Params)
			}
			typing = append(typing, r.Time)
		}
		if gap := typing[1].Sub(typing[0]); gap != c.typingEvery {
			t.Errorf("typing renewed after %v, want %v", gap, c.typingEvery)
		}
		if n := len(h.fake.RequestsFor("deleteMessage")); n != 1 {
			t.Errorf("%d deleteMessage requests", n)
		}
		// Nothing after Done, however long the turn's context lives on.
		n := len(h.fake.Requests())
		a.ToolCall("late", nil)
		a.Done()
		time.Sleep(3 * c.typingEvery)
		synctest.Wait()
		if m := len(h.fake.Requests()); m != n {
			t.Errorf("%d requests after Done", m-n)
		}
	})
}

func TestNoToolNoProgress(t *testing.T) {
	h := newBot(t, nil)
	a := h.bot.Chat().StartActivity(context.Background(), chat.In(alice))
	if _, err := h.fake.WaitFor("sendChatAction", 1, waitLong); err != nil {
		t.Fatal(err)
	}
	a.Done()
	for _, r := range h.fake.Requests() {
		if r.Method != "sendChatAction" {
			t.Errorf("unexpected %s", r.Method)
		}
	}
}

func TestStoppedTurnStillDeletesProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		a := h.bot.Chat().StartActivity(ctx, chat.In(alice))
		a.ToolCall("browser_click", json.RawMessage(`{"element":"Login button"}`))
		synctest.Wait()
		if len(h.fake.Sent(alice)) != 1 {
			t.Fatal("no progress message")
		}
		cancel() // /stop
		synctest.Wait()
		a.ToolCall("browser_type", json.RawMessage(`{"text":"ignored"}`))
		a.Done()
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || !sent[0].Deleted || sent[0].Text != "🌐 browser_click Login button" {
			t.Errorf("sent %+v", sent)
		}
	})
}

func TestToolLine(t *testing.T) {
	scrub := replacer{strings.NewReplacer("hunter2", "[redacted]")}.Redact
	tests := []struct {
		name, args, want string
	}{
		{"browser_navigate", `{"url":"https://user:pw@example.com/a/b/"}`, "🌐 browser_navigate example.com/a/b"},
		{"pw_browser_take_screenshot", `{"filename":"shot.png"}`, "🌐 pw_browser_take_screenshot shot.png"},
		{"fetch", `{"url":"http://x.org"}`, "🔗 fetch x.org"},
		{"run_shell", `{"command":"ls -la\n/tmp"}`, "💻 run_shell ls -la /tmp"},
		{"write_file", `{"path":"a.txt","content":"hunter2"}`, "📄 write_file a.txt"},
		{"browser_type", `{"element":"password","text":"hunter2"}`, "🌐 browser_type password"},
		{"search", `{"query":"my password is hunter2"}`, "🔍 search my password is [redacted]"},
		{"echo", `{"message":"hi"}`, "🔧 echo"},
		{"echo", `not json`, "🔧 echo"},
		{"echo", ``, "🔧 echo"},
		{"search", `{"query":"` + strings.Repeat("a", 100) + `"}`, "🔍 search " + strings.Repeat("a", 59) + "…"},
	}
	for _, tt := range tests {
		if got := toolLine(tt.name, json.RawMessage(tt.args), scrub); got != tt.want {
			t.Errorf("toolLine(%s, %s) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
}

func TestProgressKeepsLatestLines(t *testing.T) {
	a := &activity{c: &Chat{scrub: func(s string) string { return s }}, wake: make(chan struct{}, 1)}
	for i := range maxProgressLines + 5 {
		a.ToolCall("tool_"+string(rune('a'+i)), nil)
	}
	lines := strings.Split(a.text(), "\n")
	if len(lines) != maxProgressLines+1 || lines[0] != "… 5 earlier" || lines[1] != "🔧 tool_f" {
		t.Errorf("progress text:\n%s", a.text())
	}
}
