package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"
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
