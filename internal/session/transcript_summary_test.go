package session

import (
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// The summary read back from a transcript: none from an older bot's, the
// last of several, and one that does not fit the messages left out (the
// conversation is summarised again when needed), with the messages read
// as they are either way.
func TestTranscriptSummary(t *testing.T) {
	const (
		u1 = `{"role":"user","parts":[{"kind":"text","text":"one"}]}`
		a1 = `{"role":"assistant","parts":[{"kind":"text","text":"noted"}]}`
		u2 = `{"role":"user","parts":[{"kind":"text","text":"two"}]}`
		a2 = `{"role":"assistant","parts":[{"kind":"text","text":"noted again"}]}`
	)
	tests := []struct {
		name    string
		lines   []string
		want    agent.Summary
		mended  int
		history int
	}{
		{name: "an older bot's", lines: []string{u1, a1, u2, a2}, history: 4},
		{name: "one summary", lines: []string{u1, a1, u2, `{"summary":{"text":"the user said one","covers":2}}`, a2},
			want: agent.Summary{Text: "the user said one", Covers: 2}, history: 4},
		{name: "the last wins", lines: []string{u1, a1, `{"summary":{"text":"s1","covers":2}}`, u2, a2, `{"summary":{"text":"s2","covers":4}}`},
			want: agent.Summary{Text: "s2", Covers: 4}, history: 4},
		{name: "covers more than there is", lines: []string{u1, a1, `{"summary":{"text":"s","covers":9}}`}, mended: 1, history: 2},
		{name: "covers up to an answer", lines: []string{u1, a1, u2, a2, `{"summary":{"text":"s","covers":1}}`}, mended: 1, history: 4},
		{name: "empty", lines: []string{u1, a1, u2, a2, `{"summary":{"text":"","covers":2}}`}, mended: 1, history: 4},
		{name: "negative", lines: []string{u1, a1, u2, a2, `{"summary":{"text":"s","covers":-2}}`}, mended: 1, history: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := strings.NewReader(strings.Join(tt.lines, "\n") + "\n")
			msgs, sum, rep := decodeRecords(func(fn func([]byte, int64)) error { return store.Lines(r, maxTranscriptLine, fn) })
			if sum != tt.want || rep.mended != tt.mended || len(msgs) != tt.history || rep.unreadable != 0 {
				t.Errorf("summary %+v, %d mended, %d messages (%d unreadable); want %+v, %d, %d", sum, rep.mended, len(msgs), rep.unreadable, tt.want, tt.mended, tt.history)
			}
		})
	}
}
