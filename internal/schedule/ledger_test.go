package schedule

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func openLedger(t *testing.T, dir string) *Ledger {
	t.Helper()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// simulate writes n runs of job (each: start, finish with a delivery,
// delivered) as the scheduler does.
func simulate(t *testing.T, l *Ledger, job Job, n int) {
	t.Helper()
	for i := range n {
		slot := job.Created.Add(time.Duration(i+1) * time.Minute)
		run := Run{ID: runID(job.ID, slot), Job: job.ID, Place: job.Place, Slot: slot, Started: slot, Attempt: 1}
		put(t, l, record{Job: &job, Run: &run})
		run.Finished, run.Outcome, run.Answer = slot.Add(time.Second), OK, "answer "+strconv.Itoa(i)
		d := Delivery{ID: run.ID, Job: job.ID, Place: job.Place, Text: run.Answer, State: Pending, Created: run.Finished}
		put(t, l, record{Job: &job, Run: &run, Delivery: &d})
		if i == n-1 {
			break // the last stays pending
		}
		d.State, d.Attempts = Delivered, 1
		put(t, l, record{Delivery: &d})
		if err := l.compactIfGrown(slot); err != nil {
			t.Fatal(err)
		}
	}
}

func put(t *testing.T, l *Ledger, r record) {
	t.Helper()
	if err := l.put(r); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerCompacts: a ledger that has grown is rewritten as its state:
// the file stays small, and reopening it gives the same jobs, last runs
// and pending deliveries as before.
func TestLedgerCompacts(t *testing.T) {
	dir := t.TempDir()
	l := openLedger(t, dir)
	jobs := []Job{
		{ID: "j1", Place: chatA, Task: "a", Spec: Spec{Kind: Every, Every: time.Minute}, Created: now0},
		{ID: "j2", Place: chatB, Task: "b", Spec: Spec{Kind: Every, Every: time.Minute}, Created: now0},
	}
	put(t, l, record{Job: &jobs[0]})
	put(t, l, record{Job: &jobs[1]})
	simulate(t, l, jobs[0], 600)
	simulate(t, l, jobs[1], 10)
	before := l.st.views(func(*Job) bool { return true })
	b, err := os.ReadFile(l.j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(b, []byte("\n")); lines > compactAfter+l.st.live() {
		t.Errorf("ledger of %d lines after 610 runs (1832 records)", lines)
	}
	if len(l.st.runs) != 2 || len(l.st.dels) != 2 {
		t.Errorf("%d runs, %d deliveries in memory", len(l.st.runs), len(l.st.dels))
	}
	l.Close()
	l2 := openLedger(t, dir)
	after := l2.st.views(func(*Job) bool { return true })
	if !reflect.DeepEqual(before, after) || l2.Skipped != 0 {
		t.Errorf("reopened:\n%+v\nwant\n%+v", after, before)
	}
	if after[0].Delivery.State != Pending || after[0].LastRun.Answer != "answer 599" {
		t.Errorf("last of j1: %+v %+v", after[0].LastRun, after[0].Delivery)
	}
	if l2.st.seq != 2 {
		t.Errorf("seq %d", l2.st.seq)
	}
}

// TestLedgerForgetsDoneJobs: a compaction drops a one-off job done more
// than a week ago with nothing to deliver, and a cancelled job's
// runs, but keeps a pending delivery of a cancelled job.
func TestLedgerForgetsDoneJobs(t *testing.T) {
	l := openLedger(t, t.TempDir())
	old := Job{ID: "j1", Place: chatA, Spec: Spec{Kind: Once}, Created: now0, Done: true}
	recent := Job{ID: "j2", Place: chatA, Spec: Spec{Kind: Once}, Created: now0, Done: true}
	gone := Job{ID: "j3", Place: chatA, Spec: Spec{Kind: Every, Every: time.Hour}, Created: now0}
	r1 := Run{ID: "j1@1", Job: "j1", Finished: now0, Outcome: OK}
	r2 := Run{ID: "j2@1", Job: "j2", Finished: now0.Add(7 * 24 * time.Hour), Outcome: OK}
	r3 := Run{ID: "j3@1", Job: "j3", Finished: now0, Outcome: OK}
	d1 := Delivery{ID: "j1@1", Job: "j1", State: Delivered}
	d3 := Delivery{ID: "j3@1", Job: "j3", State: Pending, Text: "still to send"}
	for _, r := range []record{{Job: &old, Run: &r1, Delivery: &d1}, {Job: &recent, Run: &r2}, {Job: &gone, Run: &r3, Delivery: &d3}, {Remove: "j3"}} {
		put(t, l, r)
	}
	if err := l.Compact(now0.Add(8 * 24 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	l2 := openLedger(t, filepath.Dir(l.j.Path()))
	if _, ok := l2.st.jobs["j1"]; ok || len(l2.st.jobs) != 1 || l2.st.jobs["j2"] == nil {
		t.Errorf("jobs %v", l2.st.jobs)
	}
	if len(l2.st.runs) != 1 || l2.st.runs["j2@1"] == nil {
		t.Errorf("runs %v", l2.st.runs)
	}
	if len(l2.st.dels) != 1 || l2.st.dels["j3@1"].Text != "still to send" {
		t.Errorf("deliveries %v", l2.st.dels)
	}
}

// TestLedgerReadsDamage: a line that is no record is skipped (counted), a
// whole record without its line end is kept, a torn one is cut; and
// ReadLedger (volcanicbot jobs, beside a running bot) reads the same
// without writing.
func TestLedgerReadsDamage(t *testing.T) {
	dir := t.TempDir()
	job := `{"job":{"id":"j1","place":{"chat":100},"user":7,"task":"t","spec":{"kind":"every","every":60000000000,"zone":"UTC","text":"every 1m"},"notify":"always","created":"2026-12-03T10:00:00Z"}}`
	job2 := `{"job":{"id":"j2","place":{"chat":100},"user":7,"task":"u","spec":{"kind":"every","every":60000000000,"zone":"UTC","text":"every 1m"},"notify":"always","created":"2026-12-03T10:00:00Z"}}`
	tests := []struct {
		name    string
		content string
		jobs    int
		skipped int
	}{
		{"garbage line", job + "\nnot json\n" + job2 + "\n", 2, 1},
		{"whole without line end", job + "\n" + job2, 2, 0},
		{"torn", job + "\n" + job2[:40], 1, 0},
		{"empty", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, LedgerFile)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			views, err := ReadLedger(dir)
			if err != nil || len(views) > tt.jobs || (tt.name != "torn" && len(views) != tt.jobs) {
				t.Errorf("ReadLedger: %d jobs, %v", len(views), err)
			}
			after, _ := os.ReadFile(path)
			if string(after) != tt.content {
				t.Error("ReadLedger changed the file")
			}
			l, err := OpenLedger(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if len(l.st.jobs) != tt.jobs || l.Skipped != tt.skipped {
				t.Errorf("open: %d jobs, %d skipped; want %d, %d", len(l.st.jobs), l.Skipped, tt.jobs, tt.skipped)
			}
		})
	}
	if v, err := ReadLedger(filepath.Join(dir, "none")); v != nil || err != nil {
		t.Errorf("missing ledger: %v %v", v, err)
	}
}

// TestLedgerFileMode: the ledger is the bot's alone.
func TestLedgerFileMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "schedule")
	l := openLedger(t, dir)
	put(t, l, record{Job: &Job{ID: "j1"}})
	if err := l.Compact(now0); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, LedgerFile): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode().Perm(), err, want)
		}
	}
}
