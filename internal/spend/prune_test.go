package spend

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// monthLine is the "This month" line of a report.
func monthLine(report string) string {
	for l := range strings.SplitSeq(report, "\n") {
		if strings.HasPrefix(l, "This month") {
			return l
		}
	}
	return ""
}

// Maintain, at start and then after each UTC midnight (never more often):
// the months before are deleted, the days before today compacted to a
// line per chat and user, and /usage says the same before and after, and
// after a restart.
func TestMaintainDaily(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock starts at 2000-01-01 00:00 UTC.
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "1999-11-30.jsonl"), `{"chat":7,"user":1,"in":5,"out":5}`+"\n")
		writeFile(t, filepath.Join(dir, "1999-12-31.jsonl"), `{"chat":7,"user":1,"in":5,"out":5}`+"\n")
		writeFile(t, filepath.Join(dir, "notes.txt"), "the operator's\n")
		l := New(Options{Dir: dir, PerChat: 1000, DefaultModel: "m", Prices: map[string]Price{"m": {Input: 3, Cached: 3, Output: 15}}})
		if err := l.Load(); err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Maintain(ctx); close(done) }()
		synctest.Wait()
		if got := files(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
			t.Errorf("at start: %q, want the months before deleted, the rest kept", got)
		}

		l.Record(7, 1, "", call(600, 100, 50))
		l.Record(7, 1, "", call(300, 0, 100))
		l.Record(7, 2, "", call(10, 0, 10))
		l.Record(-100, 1, "", call(20, 0, 20))
		l.AllowMore(9, 42)
		if ok, _ := allow(l, 7, 1); ok {
			t.Fatal("not refused at 1,050 of 1,000")
		}
		before := monthLine(l.Report(7, 1, false))
		if before != "This month (January 2000): 1,070 tokens in 3 model calls (input 910, of which 100 cached; output 160), about $0.0051" {
			t.Errorf("month %q", before)
		}
		today := filepath.Join(dir, "2000-01-01.jsonl")
		raw, _ := os.ReadFile(today)

		// At noon a file of the month before appears: it stays until the
		// next midnight, and today's journal is not touched.
		time.Sleep(12 * time.Hour)
		late := filepath.Join(dir, "1999-12-15.jsonl")
		writeFile(t, late, `{"chat":7,"in":1}`+"\n")
		time.Sleep(11 * time.Hour)
		synctest.Wait()
		if _, err := os.Stat(late); err != nil {
			t.Errorf("pruned before the next UTC day: %v", err)
		}
		if now, _ := os.ReadFile(today); string(now) != string(raw) {
			t.Errorf("today's journal changed:\n%s", now)
		}

		time.Sleep(time.Hour) // 2000-01-02 00:00 UTC
		synctest.Wait()
		if _, err := os.Stat(late); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the month before, after midnight: %v", err)
		}
		compacted, err := os.ReadFile(today)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"chat":-100,"user":1,"model":"m","in":20,"out":20,"calls":1}` + "\n" +
			`{"chat":7,"user":1,"model":"m","in":900,"cached":100,"out":150,"calls":2}` + "\n" +
			`{"chat":7,"user":2,"model":"m","in":10,"out":10,"calls":1}` + "\n"
		if string(compacted) != want {
			t.Errorf("yesterday compacted:\n%s\nwant:\n%s", compacted, want)
		}
		if fi, _ := os.Stat(today); fi.Mode().Perm() != 0o600 {
			t.Errorf("compacted with mode %v", fi.Mode())
		}
		if got := monthLine(l.Report(7, 1, false)); got != before {
			t.Errorf("month after compacting %q, want %q", got, before)
		}
		again := New(Options{Dir: dir, DefaultModel: "m", Prices: map[string]Price{"m": {Input: 3, Cached: 3, Output: 15}}})
		if err := again.Load(); err != nil {
			t.Fatal(err)
		}
		if got := monthLine(again.Report(7, 1, false)); got != before {
			t.Errorf("month read back from the compacted day %q, want %q", got, before)
		}
		again.Close()

		// February: January goes.
		l.Record(7, 1, "", call(1, 0, 1)) // 2000-01-02
		time.Sleep(30 * 24 * time.Hour)
		synctest.Wait()
		if got := files(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
			t.Errorf("in February: %q, want January deleted", got)
		}
		if got := monthLine(l.Report(7, 1, false)); got != "This month (February 2000): no model calls" {
			t.Errorf("February %q", got)
		}
		cancel()
		<-done
	})
}

// A compacted day is left as it is; a day with only lifts and notices
// goes; a line that cannot be read is dropped, and said so.
func TestCompactDay(t *testing.T) {
	dir := t.TempDir()
	c := testkit.NewClock(time.Date(2026, 12, 9, 8, 0, 0, 0, time.UTC))
	var logs strings.Builder
	l := New(Options{Dir: dir, Now: c.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	lifts := filepath.Join(dir, "2026-12-07.jsonl")
	writeFile(t, lifts, `{"lift":7,"by":42}`+"\n"+`{"told":7}`+"\n")
	torn := filepath.Join(dir, "2026-12-08.jsonl")
	writeFile(t, torn, `{"chat":7,"user":1,"in":5,"out":5}`+"\n"+`{"chat":7,"user":1,"in":1,"out":1,"calls":3}`+"\n"+`{"chat":7,"in":12`)
	l.maintain()
	if _, err := os.Stat(lifts); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a day without model calls: %v", err)
	}
	got, _ := os.ReadFile(torn)
	if want := `{"chat":7,"user":1,"in":6,"out":6,"calls":4}` + "\n"; string(got) != want {
		t.Errorf("compacted %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), "could not read are dropped") {
		t.Errorf("the torn line was dropped silently:\n%s", logs.String())
	}
	fi, _ := os.Stat(torn)
	if changed, err := l.compactDay(torn); changed || err != nil {
		t.Errorf("compacting a compacted day: %v, %v", changed, err)
	}
	if fi2, _ := os.Stat(torn); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("a compacted day was written again")
	}
}

// Stats count what was recorded since start, priced, and the chats and
// users told their allowance was used.
func TestStats(t *testing.T) {
	c := testkit.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	l := newLedger(t, t.TempDir(), c, 1000, 500)
	l.Record(7, 1, "", call(600, 200, 100))
	l.Record(8, 2, "", call(400, 0, 200))
	allow(l, 7, 1) // user 1 is over 500
	allow(l, 7, 1) // told once
	l.Record(8, 3, "", call(300, 0, 100))
	allow(l, 8, 4) // chat 8 is over 1,000
	st := l.Stats()
	m := st.Models["m"]
	st.Models = nil
	want := Stats{Counts: Counts{Input: 1300, Cached: 200, Output: 400, Calls: 3}, ReachedChat: 1, ReachedUser: 1}
	if !reflect.DeepEqual(st, want) || m.Counts != want.Counts || !m.Priced || math.Abs(m.Cost-0.0099) > 1e-12 {
		t.Errorf("Stats = %+v, model m %+v; want %+v, cost 0.0099", st, m, want)
	}
	l2 := New(Options{Dir: t.TempDir(), DefaultModel: "free"})
	l2.Record(7, 1, "", call(10, 0, 10))
	if m := l2.Stats().Models["free"]; m.Priced || m.Cost != 0 || m.Calls != 1 {
		t.Errorf("without prices: %+v", m)
	}
}
