package spend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// What a crash or a stray line leaves in the day's journal costs that line
// only: a call recorded after a torn line is counted after the next
// restart (it was glued to the torn line, and both lost), and a line over
// the reader's bound is skipped (Load failed on it: no usage, no
// allowance).
func TestJournalDamageCostsThatLineOnly(t *testing.T) {
	tests := []struct {
		name, damage string
	}{
		{"a torn last line", `{"chat":7,"in":12`},
		{"a line over the bound", `{"chat":7,"x":"` + strings.Repeat("x", maxUsageLine) + `"}` + "\n"},
		{"a corrupt line", "not json\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			c := testkit.NewClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
			l := newLedger(t, dir, c, 0, 0)
			l.Record(7, 1, "", call(100, 0, 10))
			l.Close()
			f, err := os.OpenFile(filepath.Join(dir, "2026-12-02.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tt.damage); err != nil {
				t.Fatal(err)
			}
			f.Close()

			l = newLedger(t, dir, c, 0, 0)
			l.Record(7, 1, "", call(200, 0, 20))
			l.Close()
			l = newLedger(t, dir, c, 0, 0)
			if got, want := l.chats[7], (Counts{Input: 300, Output: 30, Calls: 2}); got != want {
				t.Errorf("after restarts: %+v, want %+v", got, want)
			}
		})
	}
}
