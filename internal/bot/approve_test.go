package bot

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

const admin = 1003 // one of TELEGRAM_ADMINS in the approval tests

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// approvalRequest is a call of github's delete_repo, started by alice.
func approvalRequest() session.ApprovalRequest {
	return session.ApprovalRequest{
		UserID: alice, Server: "github", Tool: "delete_repo", Exposed: "gh_delete_repo",
		Annotations: chat.Annotations{ReadOnlyHint: no(), DestructiveHint: yes(), OpenWorldHint: yes()},
		Arguments:   json.RawMessage(`{"owner":"volcanicbot","repo":"<old & gone>"}`),
		OfferAlways: true, Timeout: 5 * time.Minute,
	}
}

func TestApprove(t *testing.T) {
	tests := []struct {
		name     string
		chat     int64
		noAlways bool // OfferAlways false
		presses  []press
		cancel   bool
		want     session.Approval
		err      error
		outcome  string
	}{
		{name: "approved", chat: alice, presses: []press{{chat: alice, user: alice, label: "✅ Approve", answer: "✅ Approve"}},
			want: session.Approved, outcome: "✅ Approved by User 1001."},
		{name: "denied", chat: alice, presses: []press{{chat: alice, user: alice, label: "❌ Deny", answer: "❌ Deny"}},
			want: session.Denied, outcome: "❌ Denied by User 1001."},
		{name: "always in this chat", chat: alice, presses: []press{{chat: alice, user: alice, label: "Always in this chat", answer: "Always in this chat"}},
			want: session.ApprovedAlways, outcome: "✅ Approved by User 1001, for every call of delete_repo in this chat."},
		{name: "nobody answers", chat: alice, want: session.Denied, err: session.ErrNoApproval,
			outcome: "⌛ No answer within 5 minutes: denied."},
		{name: "the turn is stopped", chat: alice, cancel: true, want: session.Denied, err: context.Canceled,
			outcome: "⏹ Stopped: not run."},
		{name: "forged and replayed presses change nothing", chat: alice, presses: []press{
			{chat: alice, user: alice, data: "q:AAAAAAAAAAAAAAAAAAAAAAAAAA:0", answer: expiredPress},
			{chat: alice, user: alice, data: choiceApprove, answer: expiredPress},
			{chat: alice, user: alice, label: "✅ Approve", otherMsg: true, answer: expiredPress},
			{chat: bob, user: bob, label: "✅ Approve", answer: expiredPress},
			{chat: alice, user: alice, label: "❌ Deny", answer: "❌ Deny"},
		}, want: session.Denied, outcome: "❌ Denied by User 1001."},
		{name: "group: only the starter or an admin decides", chat: group, presses: []press{
			{chat: group, user: stranger, label: "✅ Approve", answer: strangerPress, alert: true},
			{chat: group, user: bob, label: "✅ Approve", answer: approvalRefusal, alert: true},
			{chat: group, user: alice, label: "✅ Approve", answer: "✅ Approve"},
		}, want: session.Approved, outcome: "✅ Approved by User 1001."},
		{name: "group: an admin decides", chat: group, presses: []press{
			{chat: group, user: admin, label: "❌ Deny", answer: "❌ Deny"},
		}, want: session.Denied, outcome: "❌ Denied by User 1003."},
		{name: "alwaysAsk: no always button", chat: alice, noAlways: true, presses: []press{
			{chat: alice, user: alice, label: "✅ Approve", answer: "✅ Approve"},
		}, want: session.Approved, outcome: "✅ Approved by User 1001."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, func(o *testOptions) { o.Admins = []int64{admin} })
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := approvalRequest()
				req.OfferAlways = !tt.noAlways
				type result struct {
					a   session.Approval
					err error
				}
				done := make(chan result, 1)
				go func() {
					a, err := h.bot.Chat().Approve(ctx, chat.In(tt.chat), req)
					done <- result{a, err}
				}()
				msgs, err := h.fake.WaitSent(tt.chat, 1, waitLong)
				if err != nil {
					t.Fatal(err)
				}
				q := msgs[0]
				wantRows := 2
				if tt.noAlways {
					wantRows = 1
				}
				if len(q.Keyboard) != wantRows || len(q.Keyboard[0]) != 2 {
					t.Fatalf("keyboard %+v, want %d rows", q.Keyboard, wantRows)
				}
				h.pressAll(t, tt.presses, q)
				if tt.cancel {
					synctest.Wait()
					cancel()
				}
				r := <-done
				if r.a != tt.want || !errors.Is(r.err, tt.err) || (tt.err == nil) != (r.err == nil) {
					t.Errorf("Approve = %v, %v; want %v, %v", r.a, r.err, tt.want, tt.err)
				}
				// The closing edit is queued behind the chat's pace.
				time.Sleep(telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				final := h.fake.Sent(tt.chat)[0]
				if final.Keyboard != nil || !strings.HasSuffix(final.Text, "\n\n<i>"+tt.outcome+"</i>") {
					t.Errorf("closed approval %q, keyboard %v; want it to end with %q, without buttons", final.Text, final.Keyboard, tt.outcome)
				}
				// A press once it is decided: expired, and nothing changes.
				edits := final.Edits()
				id := h.fake.Callback(tt.chat, alice, q.ID, q.Keyboard[0][0].Data)
				if a, err := h.fake.WaitAnswer(id, waitLong); err != nil || a.Text != expiredPress {
					t.Errorf("a press after the decision: %+v, %v", a, err)
				}
				synctest.Wait()
				if h.fake.Sent(tt.chat)[0].Edits() != edits {
					t.Error("a late press changed the message")
				}
			})
		})
	}
}

// The message names the server and the tool, says what the annotations
// mean, and shows the arguments as pretty JSON, escaped for HTML.
func TestApprovalMessage(t *testing.T) {
	h := startBot(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.bot.Chat().Approve(ctx, chat.In(alice), approvalRequest())
	}()
	msgs, err := h.fake.WaitSent(alice, 1, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	m := msgs[0]
	want := "🔐 <b>May I run this tool?</b>\nServer <b>github</b>, tool <code>delete_repo</code>.\n" +
		"It may delete or overwrite data and talks to the outside world.\n" +
		"<pre><code class=\"language-json\">{\n  &#34;owner&#34;: &#34;volcanicbot&#34;,\n  &#34;repo&#34;: &#34;&lt;old &amp; gone&gt;&#34;\n}</code></pre>"
	if m.ParseMode != "HTML" || m.Text != want {
		t.Errorf("approval message (%s):\n%s\nwant:\n%s", m.ParseMode, m.Text, want)
	}
	if len(h.fake.Sent(alice)) != 1 {
		t.Errorf("sent %d messages, want the approval alone", len(h.fake.Sent(alice)))
	}
}

// Arguments too long for one message: the whole of them as a document
// first, and the message shows as much as fits, saying so.
func TestApprovalLongArguments(t *testing.T) {
	h := startBot(t, nil)
	req := approvalRequest()
	long := strings.Repeat("line of a file to write\n", 400) // ~9,600 characters
	args, _ := json.Marshal(struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}{"/tmp/out.txt", long})
	req.Arguments = args
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.bot.Chat().Approve(ctx, chat.In(alice), req)
	}()
	msgs, err := h.fake.WaitSent(alice, 2, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	doc, q := msgs[0], msgs[1]
	if doc.Method != "sendDocument" || doc.File == nil || doc.File.Filename != argsFile {
		t.Fatalf("first %s %+v, want the arguments as %s", doc.Method, doc.File, argsFile)
	}
	var got map[string]string
	if err := json.Unmarshal(doc.File.Data, &got); err != nil || got["content"] != long {
		t.Errorf("the document does not hold the arguments in full (%v)", err)
	}
	plain := htmlText(q.Text)
	if !strings.Contains(plain, "The arguments (in full in arguments.json above) begin:") || !strings.Contains(plain, `"path": "/tmp/out.txt"`) {
		t.Errorf("message %q", plain[:200])
	}
	if n := len([]rune(plain)); n > 4096 || n < 3000 {
		t.Errorf("the message has %d characters: want as much as fits, under 4096", n)
	}
	if len(q.Keyboard) != 2 {
		t.Errorf("keyboard %+v", q.Keyboard)
	}
}
