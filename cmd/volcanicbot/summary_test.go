package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// notedModel is a chat's model for a long conversation: it summarises by
// keeping the sentences that say "Remember", answers a question from what
// the request holds, and says "noted" to anything else. Before it answers
// the first request a summary heads, it waits for the chat's progress
// message to show the summary (so that the answer cannot overtake it).
func notedModel(d **daemon, chat int64) modelReply {
	summarise := llmtest.Summariser(func(s string) bool { return strings.Contains(s, "Remember") })
	code := regexp.MustCompile(`locker code is (\d+)`)
	return func(req llmtest.Request) llmtest.Reply {
		r := notedReply(d, chat, summarise, code, req)
		r.Usage = llm.Usage{InputTokens: 100, OutputTokens: 10} // for /usage
		return r
	}
}

func notedReply(d **daemon, chat int64, summarise modelReply, code *regexp.Regexp, req llmtest.Request) llmtest.Reply {
	{
		if llmtest.AsksForSummary(req) {
			return summarise(req)
		}
		text := llmtest.PromptText(req)
		if strings.Contains(text, "[Summary of the earlier part") && *d != nil {
			_ = (*d).tg.WaitUntil(func() bool { return progressNotice(*d, chat) != "" }, 10*time.Second)
		}
		if strings.HasSuffix(lastUserText(req), "?") {
			if m := code.FindStringSubmatch(text); m != nil {
				return llmtest.Text("Your locker code is " + m[1])
			}
			return llmtest.Text("I do not know.")
		}
		return llmtest.Text(fmt.Sprintf("noted %d", len(lastUserText(req))))
	}
}

// progressNotice is the text of the chat's progress message that told of a
// summary, or "".
func progressNotice(d *daemon, chat int64) string {
	for _, m := range d.tg.Sent(chat) {
		if strings.Contains(m.Text, "📝 summarised the earlier conversation") {
			return m.Text
		}
	}
	return ""
}

// summaryText is the summary heading a wire request (its header and
// text: the text block that holds it, up to the next message's text where
// the adapter joined them), or "".
func summaryText(req llmtest.Request) string {
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case string:
			if strings.HasPrefix(v, "[Summary of the earlier part") {
				return v
			}
		case []any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		case map[string]any:
			for _, e := range v {
				if s := find(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	text := find(req.JSON["messages"])
	if text == "" {
		return ""
	}
	header := strings.Index(text, "]\n\n") + 3
	if end := strings.Index(text[header:], "\n\n"); header > 2 && end >= 0 {
		return text[:header+end]
	}
	return text
}

// A long chat through the real binary, with both model fakes: its oldest
// turns are summarised by the model (a request with no tools), the chat is
// told once in the progress message, the early fact is still answered,
// /usage counts the summary request; after a restart the same summary
// heads the requests; the transcript keeps every message; /new starts
// empty.
func TestE2ELongChatIsSummarised(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dataDir, tg := t.TempDir(), newTelegram(t)
			var d *daemon
			o := daemonOptions{provider: provider, dataDir: dataDir, tg: tg, extra: []string{"LLM_CONTEXT_TOKENS=6000"}}
			d = startDaemon(t, notedModel(&d, alice), o)
			d.tg.Message(alice, alice, "Remember: my locker code is 4821.")
			d.waitText(alice, "noted")
			filler := strings.Repeat("lorem ipsum dolor ", 120) // ~540 tokens
			for i := range 10 {
				d.tg.Message(alice, alice, fmt.Sprintf("message %d: %s", i, filler))
				d.waitSent(alice, i+2)
			}
			d.tg.Message(alice, alice, "What is my locker code?")
			d.waitText(alice, "Your locker code is 4821")

			reqs := d.model.Requests()
			summaries := 0
			for _, r := range reqs {
				if llmtest.AsksForSummary(r) {
					summaries++
					if tools, _ := r.JSON["tools"].([]any); len(tools) > 0 {
						t.Error("a summary request offers tools")
					}
				}
			}
			if summaries != 1 {
				t.Errorf("%d summary requests, want 1", summaries)
			}
			last := reqs[len(reqs)-1]
			head := summaryText(last)
			if !strings.Contains(head, "Remember: my locker code is 4821.") {
				t.Errorf("the last request's summary: %q", head)
			}
			if text := llmtest.PromptText(last); strings.Contains(text, "message 0:") || strings.Contains(text, "left out to fit") {
				t.Error("the last request holds a summarised message, or was trimmed")
			}
			if n := strings.Count(progressNotice(d, alice), "📝"); n != 1 {
				t.Errorf("the progress told of %d summaries; messages %+v", n, d.tg.Sent(alice))
			}
			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, fmt.Sprintf("in %d model calls", len(reqs)))
			d.waitLog("conversation summarised")

			transcript, err := os.ReadFile(filepath.Join(chatdir.New(dataDir).Private(chat.In(alice)), "transcript.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(transcript), "message 0:") || strings.Count(string(transcript), `{"summary":`) != 1 {
				t.Error("the transcript lacks an early message or the summary")
			}
			before := len(d.texts(alice))
			d.stop()

			// After a restart: the same summary heads the request, none
			// is made again.
			d = startDaemon(t, notedModel(&d, alice), o)
			d.tg.Message(alice, alice, "And my locker code, again?")
			if err := d.tg.WaitUntil(func() bool { return len(d.texts(alice)) > before }, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			if got := d.texts(alice)[before]; got != "Your locker code is 4821" {
				t.Errorf("after a restart: %q", got)
			}
			after := d.model.Requests()
			if len(after) != 1 || summaryText(after[0]) != head {
				t.Errorf("after a restart: %d requests, head %q, want %q", len(after), summaryText(after[len(after)-1]), head)
			}

			// /new starts empty: no summary, no early fact.
			d.tg.Message(alice, alice, "/new")
			d.waitText(alice, "New conversation started.")
			d.tg.Message(alice, alice, "What is my locker code?")
			d.waitText(alice, "I do not know.")
			if reqs := d.model.Requests(); summaryText(reqs[len(reqs)-1]) != "" {
				t.Error("after /new the request has a summary")
			}
		})
	}
}

// A summary that cannot be made, through the real binary: the model
// refuses the summary request, or summaries are off (LLM_SUMMARIES=false).
// The chat is answered all the same from the trimmed conversation, the
// log says why when a summary failed, and the transcript keeps every
// message and no summary.
func TestE2ESummaryFallsBackToTrimming(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		warn  bool
	}{
		{name: "the model refuses", warn: true},
		{name: "summaries off", extra: []string{"LLM_SUMMARIES=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var summaries atomic.Int32
			reply := func(req llmtest.Request) llmtest.Reply {
				if llmtest.AsksForSummary(req) {
					summaries.Add(1)
					return llmtest.Status(400)
				}
				return llmtest.Text(fmt.Sprintf("noted %d", len(lastUserText(req))))
			}
			dataDir := t.TempDir()
			d := startDaemon(t, reply, daemonOptions{dataDir: dataDir, extra: append([]string{"LLM_CONTEXT_TOKENS=6000"}, tt.extra...)})
			d.tg.Message(alice, alice, "Remember: my locker code is 4821.")
			d.waitText(alice, "noted")
			filler := strings.Repeat("lorem ipsum dolor ", 120)
			for i := range 10 {
				d.tg.Message(alice, alice, fmt.Sprintf("message %d: %s", i, filler))
				d.waitSent(alice, i+2)
			}
			reqs := d.model.Requests()
			last := reqs[len(reqs)-1]
			if text := llmtest.PromptText(last); !strings.Contains(text, "left out to fit the context window") || summaryText(last) != "" {
				t.Errorf("the last request is not trimmed, or has a summary")
			}
			if tt.warn != (summaries.Load() > 0) || tt.warn != strings.Contains(d.logs.String(), "conversation not summarised: the request is trimmed instead") {
				t.Errorf("%d summary requests; warning in the log: %v", summaries.Load(), !tt.warn)
			}
			if progressNotice(d, alice) != "" {
				t.Error("the progress told of a summary")
			}
			transcript, err := os.ReadFile(filepath.Join(chatdir.New(dataDir).Private(chat.In(alice)), "transcript.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(transcript), "locker code is 4821") || strings.Contains(string(transcript), `{"summary":`) {
				t.Error("the transcript lacks the first message, or holds a summary")
			}
		})
	}
}
