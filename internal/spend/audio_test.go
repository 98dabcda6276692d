package spend

import (
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Transcribed voice notes are counted in seconds, per model, apart from
// the model calls (no tokens, no call, no allowance), and read back after
// a restart the same.
func TestRecordAudio(t *testing.T) {
	dir := t.TempDir()
	c := testkit.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, dir, c, 100, 0)
	l.RecordAudio(7, 1, "whisper-1", 45)
	l.RecordAudio(7, 1, "whisper-1", 80)
	l.RecordAudio(7, 1, "whisper-1", 0) // nothing
	l.Record(7, 1, "", call(10, 0, 5))
	want := []string{
		"Today (2026-12-02): 15 tokens in 1 model call (input 10, of which 0 cached; output 5), about $0.0001; voice notes transcribed: 2 min 5 s",
		"• whisper-1: voice notes transcribed: 2 min 5 s | voice notes transcribed: 2 min 5 s",
		"Allowance: 100 tokens a day for this chat, 85 left today.",
	}
	check := func(r string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(r, w) {
				t.Errorf("report lacks %q:\n%s", w, r)
			}
		}
	}
	check(l.Report(7, 1, false))
	if r := l.Report(8, 2, false); strings.Contains(r, "voice notes") {
		t.Errorf("another chat's report counts them:\n%s", r)
	}
	l.Close()
	check(newLedger(t, dir, c, 100, 0).Report(7, 1, false))
}

// A chat that only sent voice notes has no model calls, and says so.
func TestRecordAudioAlone(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 0, 0)
	l.RecordAudio(7, 1, "whisper-1", 30)
	if r := l.Report(7, 1, false); !strings.Contains(r, "Today (2026-12-02): no model calls; voice notes transcribed: 30 s") {
		t.Errorf("report:\n%s", r)
	}
}
