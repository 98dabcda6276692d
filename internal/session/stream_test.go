package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// recordingStream is a StreamingActivity that keeps what it was shown.
type recordingStream struct{ shown []string }

func (r *recordingStream) ToolCall(string, json.RawMessage)     {}
func (r *recordingStream) Done()                                {}
func (r *recordingStream) Stream(text string)                   { r.shown = append(r.shown, text) }
func (r *recordingStream) Answer(context.Context, string) error { return nil }

// A secret split across pieces is shown only whole, so the redactor
// catches it: the stream shows whole words, at most every streamEvery.
func TestAnswerStreamShowsWholeWordsRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recordingStream{}
		a := &answerStream{to: rec, redact: strings.NewReplacer("sk-live-12345", "[redacted]").Replace}
		for _, p := range []string{"The key ", "is sk-", "live-", "123", "45 and", " more", " text", " here"} {
			a.add(p)
			time.Sleep(streamEvery)
		}
		for _, s := range rec.shown {
			if strings.Contains(s, "sk-") || strings.Contains(s, "live") {
				t.Errorf("a part of the secret was shown: %q", s)
			}
		}
		if got := a.flush(); got != "The key is [redacted] and more text" {
			t.Errorf("flush = %q", got)
		}
		if last := rec.shown[len(rec.shown)-1]; last != "The key is [redacted] and more text" {
			t.Errorf("last shown %q", last)
		}
	})
}

// Pieces arriving faster than streamEvery are shown once per streamEvery.
func TestAnswerStreamPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recordingStream{}
		a := &answerStream{to: rec, redact: func(s string) string { return s }}
		for range 100 {
			a.add("word ")
			time.Sleep(10 * time.Millisecond)
		}
		if n := len(rec.shown); n > 5 || n < 3 {
			t.Errorf("%d updates in 1 s, want one per %v", n, streamEvery)
		}
	})
}

// streamLog records what streaming activities were given, in order.
type streamLog struct {
	mu     sync.Mutex
	events []string
}

func (l *streamLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *streamLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// streamingChat is a Chat whose activities stream into a streamLog.
type streamingChat struct {
	Chat
	log *streamLog
}

func (c streamingChat) StartActivity(ctx context.Context, chatID chat.Place) Activity {
	return streamingActivity{c.Chat.StartActivity(ctx, chatID), c, chatID}
}

type streamingActivity struct {
	Activity
	c    streamingChat
	chat chat.Place
}

func (a streamingActivity) Stream(text string) { a.c.log.add("stream " + text) }

func (a streamingActivity) Answer(ctx context.Context, markdown string) error {
	a.c.log.add("answer " + markdown)
	return a.c.SendText(ctx, a.chat, markdown)
}

// speak hands pieces to the request's OnText, as a streaming adapter does.
func speak(req llm.Request, pieces ...string) string {
	for _, p := range pieces {
		if req.OnText != nil {
			req.OnText(p)
		}
	}
	return strings.Join(pieces, "")
}

// A tool step's streamed text is taken down; the answer goes through
// Answer, in place of the stream.
func TestTurnStreamsEachStep(t *testing.T) {
	log := &streamLog{}
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: speak(req, "the tool ", "said: ", llmtest.ResultText(res[0]))}, nil
		}
		resp := toolCall("c1", "echo", fmt.Sprintf(`{"text":%q}`, llmtest.LastUserText(req)))
		resp.Text = speak(req, "Let me ", "check.")
		return resp, nil
	}, envOptions{streams: log})
	e.deliver(chat.In(1), "hello")
	if got := e.chat.waitTexts(t, chat.In(1), 1); got[0] != "the tool said: hello" {
		t.Errorf("answer %q", got[0])
	}
	want := []string{"stream Let me", "stream ", "stream the tool", "answer the tool said: hello"}
	if got := log.all(); !slices.Equal(got, want) {
		t.Errorf("the activity got %q, want %q", got, want)
	}
}

// Options.NoStream: no OnText, the answer by SendText.
func TestNoStreamSendsWholeAnswers(t *testing.T) {
	log := &streamLog{}
	var asked []bool
	var mu sync.Mutex
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		asked = append(asked, req.OnText != nil)
		mu.Unlock()
		return llm.Response{Text: speak(req, "whole ", "answer")}, nil
	}, envOptions{streams: log, noStream: true})
	e.deliver(chat.In(1), "hello")
	e.chat.waitTexts(t, chat.In(1), 1)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] || len(log.all()) != 0 {
		t.Errorf("streamed: %v, activity got %q", asked, log.all())
	}
}
