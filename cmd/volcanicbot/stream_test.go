package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// slowAnswer is a reply the model writes in pieces, 500 ms apart, with
// Markdown left open between them.
var slowAnswer = []string{
	"Here is **the", " plan**: open", " the `settings", " page`, then", " click [Save](https://exa", "mple.org).",
	"\n\n```sh\nmake", " test\n```\n\nThen", " ~~wait~~ check", " again.",
}

func slowReply(llmtest.Request) llmtest.Reply {
	return llmtest.Reply{Chunks: slowAnswer, ChunkDelay: 500 * time.Millisecond}
}

// updateTimes are the times of the chat's calls of methods, in order.
func updateTimes(tg *telegramtest.Fake, chat int64, methods ...string) []time.Time {
	var out []time.Time
	for _, r := range tg.Requests() {
		for _, m := range methods {
			if r.Method == m && r.ChatID() == chat && r.Status == 200 {
				out = append(out, r.Time)
			}
		}
	}
	return out
}

func checkPaced(t *testing.T, times []time.Time) {
	t.Helper()
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < time.Second {
			t.Errorf("update %d came %v after the one before, want >= 1s", i, gap)
		}
	}
}

// rawMarkdown reports whether a version of a message shows Markdown
// markers: an unfinished construct rendered as it stands.
func rawMarkdown(s string) bool {
	return strings.Contains(s, "**") || strings.Contains(s, "`") || strings.Contains(s, "](") || strings.Contains(s, "~~")
}

// A slow model's answer, through both providers' streams: drafts in a
// private chat, or one message edited in place where drafts are refused;
// at most one update a second, valid HTML and no raw Markdown at every
// step, the final text exact.
func TestE2EStreamedAnswer(t *testing.T) {
	full := strings.Join(slowAnswer, "")
	want := tgformat.Render(full)[0].HTML
	for _, provider := range []string{"openai", "anthropic"} {
		for _, drafts := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/drafts=%v", provider, drafts), func(t *testing.T) {
				t.Parallel()
				tg := telegramtest.Start(telegramtest.Options{NoDrafts: !drafts})
				t.Cleanup(tg.Close)
				d := startDaemon(t, slowReply, daemonOptions{provider: provider, tg: tg, paced: true})
				d.tg.Message(alice, alice, "plan?")
				d.waitText(alice, "check again.")
				msgs := d.tg.Sent(alice)
				if len(msgs) != 1 || msgs[0].Text != want {
					t.Fatalf("messages %+v, want one: %q", msgs, want)
				}
				versions := msgs[0].History
				updates := updateTimes(d.tg, alice, "sendMessage", "editMessageText")
				if drafts {
					versions = nil
					for _, dr := range d.tg.Drafts(alice) {
						versions = append(versions, dr.Text)
					}
					updates = updateTimes(d.tg, alice, "sendMessageDraft")
					if msgs[0].Edits() != 0 {
						t.Errorf("the answer was edited %d times after the drafts", msgs[0].Edits())
					}
				} else {
					versions = versions[:len(versions)-1] // the last is the answer
				}
				if len(versions) < 2 {
					t.Fatalf("%d streamed versions, want several: %q", len(versions), versions)
				}
				for i, v := range versions {
					if rawMarkdown(v) {
						t.Errorf("version %d shows raw Markdown: %q", i, v)
					}
				}
				checkPaced(t, updates)
				if n := d.tg.TooMany(alice); n != 0 {
					t.Errorf("%d 429s", n)
				}
			})
		}
	}
}

// STREAM_REPLIES=false: the answer comes whole, as one message.
func TestE2EStreamRepliesOff(t *testing.T) {
	d := startDaemon(t, slowReply, daemonOptions{extra: []string{"STREAM_REPLIES=false"}, paced: true})
	d.tg.Message(alice, alice, "plan?")
	d.waitText(alice, "check again.")
	msgs := d.tg.Sent(alice)
	if len(msgs) != 1 || msgs[0].Edits() != 0 || len(d.tg.Drafts(alice)) != 0 {
		t.Errorf("messages %+v, %d drafts: want one message, unedited, no drafts", msgs, len(d.tg.Drafts(alice)))
	}
	if reqs := d.model.Requests(); reqs[0].JSON["stream"] == true {
		t.Error("the model was asked to stream")
	}
}

// /stop mid-stream: the streamed message keeps what came, "Stopped."
// follows it, and the conversation remembers it.
func TestE2EStopMidStream(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			tg := telegramtest.Start(telegramtest.Options{NoDrafts: true})
			t.Cleanup(tg.Close)
			long := make([]string, 200)
			for i := range long {
				long[i] = fmt.Sprintf("w%d ", i)
			}
			d := startDaemon(t, func(r llmtest.Request) llmtest.Reply {
				if lastUserText(r) == "again" {
					return llmtest.Text("ok")
				}
				return llmtest.Reply{Chunks: long, ChunkDelay: 100 * time.Millisecond}
			}, daemonOptions{provider: provider, tg: tg, paced: true})
			d.tg.Message(alice, alice, "talk")
			if _, err := d.tg.WaitFor("editMessageText", 1, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			d.tg.Message(alice, alice, "/stop")
			d.waitText(alice, "Stopped.")
			texts := d.texts(alice)
			if len(texts) != 2 || texts[1] != "Stopped." || !strings.HasPrefix(texts[0], "w0 w1 w2") {
				t.Fatalf("texts %q, want the streamed part, then Stopped.", texts)
			}
			shown := texts[0]
			edits := d.tg.Sent(alice)[0].History
			if before := edits[len(edits)-2]; len(shown) < len(before) {
				t.Errorf("the kept text %q is shorter than what was shown before %q", shown, before)
			}
			d.tg.Message(alice, alice, "again")
			d.waitText(alice, "ok")
			reqs := d.model.Requests()
			if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, shown) {
				t.Errorf("the next request lacks the stopped answer %q", shown)
			}
		})
	}
}

// A 429 while streaming: the chat is held, the answer still arrives, and
// no second 429 comes for the chat.
func TestE2EStreamThrough429(t *testing.T) {
	tg := telegramtest.Start(telegramtest.Options{NoDrafts: true})
	t.Cleanup(tg.Close)
	d := startDaemon(t, slowReply, daemonOptions{tg: tg, paced: true})
	d.tg.FailNext("editMessageText", 429, "", 2)
	d.tg.Message(alice, alice, "plan?")
	d.waitText(alice, "check again.")
	msgs := d.tg.Sent(alice)
	if len(msgs) != 1 || msgs[0].Text != tgformat.Render(strings.Join(slowAnswer, ""))[0].HTML {
		t.Fatalf("messages %+v", msgs)
	}
	var got429 int
	for _, r := range d.tg.RequestsFor("editMessageText") {
		if r.Status == 429 {
			got429++
		}
	}
	if got429 != 1 || d.tg.TooMany(alice) != 0 {
		t.Errorf("%d injected 429s seen, %d for breaking the limits; want 1 and 0", got429, d.tg.TooMany(alice))
	}
}
