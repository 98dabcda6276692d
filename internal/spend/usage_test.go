package spend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func newLedger(t *testing.T, dir string, c *testkit.Clock, perChat, perUser int64) *Ledger {
	t.Helper()
	l := New(Options{Dir: dir, PerChat: perChat, PerUser: perUser, Now: c.Now, DefaultModel: "m", Prices: map[string]Price{"m": {Input: 3, Cached: 3, Output: 15}}})
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// allow is whether a request may go now: a Reserve that spends nothing.
func allow(l *Ledger, chat, user int64) (bool, string) {
	spent, notice, err := l.Reserve(context.Background(), chat, user, "", 1, 0)
	if err != nil || spent == nil {
		return false, notice
	}
	spent(llm.Usage{})
	return true, ""
}

func call(in, cached, out int) llm.Usage {
	return llm.Usage{InputTokens: in, CacheReadTokens: cached, OutputTokens: out}
}

func TestAllowancePerChat(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 21, 47, 30, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 1000, 0)
	if ok, _ := allow(l, 7, 1); !ok {
		t.Fatal("refused before any use")
	}
	l.Record(7, 1, "", call(600, 500, 300))
	if ok, _ := allow(l, 7, 1); !ok {
		t.Fatal("refused at 900 of 1000")
	}
	l.Record(7, 1, "", call(50, 0, 50))
	ok, notice := allow(l, 7, 1)
	want := "This chat has used today's allowance of 1,000 tokens. I can answer again from 00:00 UTC (in 2 h 13 min); " +
		"until then I make no model request here. An admin can lift it for today with /allow_more 7."
	if ok || notice != want {
		t.Errorf("at 1000 of 1000: %v, %q; want refused with %q", ok, notice, want)
	}
	if ok, notice := allow(l, 7, 2); ok || notice != "" {
		t.Errorf("again: %v, %q; want refused without a second notice", ok, notice)
	}
	if ok, _ := allow(l, 8, 1); !ok {
		t.Error("another chat is refused")
	}
	c.Set(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if ok, _ := allow(l, 7, 1); !ok {
		t.Error("refused on the next UTC day")
	}
}

func TestAllowancePerUser(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 0, 500)
	l.Record(7, 1, "", call(200, 0, 100))
	l.Record(-100, 1, "", call(150, 0, 50)) // the same user in a group
	ok, notice := allow(l, -100, 1)
	if ok || !strings.HasPrefix(notice, "You have used today's allowance of 500 tokens.") {
		t.Errorf("user 1 at 500: %v, %q", ok, notice)
	}
	if ok, _ := allow(l, -100, 2); !ok {
		t.Error("another user of the group is refused")
	}
	if ok, notice := allow(l, 7, 1); ok || notice == "" {
		t.Errorf("user 1 in another chat: %v, %q; want refused, told there too", ok, notice)
	}
}

// The record survives a restart: today's totals, the notices given, the
// lifts, and the month's totals; a torn line is skipped.
func TestLedgerSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	c := testkit.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := newLedger(t, dir, c, 1000, 0)
	l.Record(7, 1, "", call(700, 100, 400)) // Dec 1
	c.Advance(24 * time.Hour)
	l.Record(7, 1, "", call(900, 0, 200)) // Dec 2: over
	if ok, notice := allow(l, 7, 1); ok || notice == "" {
		t.Fatal("not refused")
	}
	l.Record(9, 3, "", call(10, 0, 10))
	l.AllowMore(9, 42)
	l.Close()
	f, err := os.OpenFile(filepath.Join(dir, "2026-12-02.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"chat":7,"in":12`) // a crash mid-line
	f.Close()
	if fi, err := os.Stat(filepath.Join(dir, "2026-12-01.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("journal: %v, %v", fi, err)
	}

	l = newLedger(t, dir, c, 1000, 0)
	if ok, notice := allow(l, 7, 1); ok || notice != "" {
		t.Errorf("after a restart: %v, %q; want refused, without telling again", ok, notice)
	}
	if l.chats[7] != (Counts{Input: 900, Output: 200, Calls: 1}) {
		t.Errorf("today %+v", l.chats[7])
	}
	if !l.lifted[9] {
		t.Error("the lift is lost")
	}
	report := l.Report(7, 1, false)
	for _, want := range []string{
		"Today (2026-12-02): 1,100 tokens in 1 model call (input 900, of which 0 cached; output 200), about $0.0057",
		"This month (December 2026): 2,200 tokens in 2 model calls (input 1,600, of which 100 cached; output 600), about $0.01",
		"Allowance: 1,000 tokens a day for this chat, 0 left today.",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// A new month starts from nothing.
	c.Set(time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC))
	if r := l.Report(7, 1, false); !strings.Contains(r, "This month (January 2027): no model calls") {
		t.Errorf("January:\n%s", r)
	}
}

func TestAllowMore(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 100, 100)
	l.Record(7, 1, "", call(100, 0, 100))
	if ok, _ := allow(l, 7, 1); ok {
		t.Fatal("not refused")
	}
	l.AllowMore(7, 42)
	if ok, _ := allow(l, 7, 1); !ok {
		t.Error("refused after /allow_more")
	}
	if !strings.Contains(l.Report(7, 1, false), "(lifted by an admin for today)") {
		t.Error("the report does not say it is lifted")
	}
	if ok, _ := allow(l, 8, 1); ok {
		t.Error("the lift reaches the user in another chat")
	}
	c.Advance(24 * time.Hour)
	l.Record(7, 1, "", call(100, 0, 100))
	if ok, _ := allow(l, 7, 1); ok {
		t.Error("the lift outlived its day")
	}
}

func TestNoAllowance(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := New(Options{Dir: t.TempDir(), Now: c.Now})
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	l.Record(7, 1, "", call(1_000_000, 0, 1_000_000))
	if ok, _ := allow(l, 7, 1); !ok {
		t.Error("refused with no allowance set")
	}
	r := l.Report(7, 1, false)
	if !strings.Contains(r, "No daily allowance is set.") || strings.Contains(r, "$") {
		t.Errorf("report:\n%s", r)
	}
}

func TestNumber(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := Number(n); got != want {
			t.Errorf("Number(%d) = %q, want %q", n, got, want)
		}
	}
}
