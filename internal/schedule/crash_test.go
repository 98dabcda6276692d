package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// These tests stop the bot between the steps of a run by copying the
// ledger while a port call is blocked: every record is synced before the
// next step, so the copy is what a SIGKILL at that moment leaves. The
// copy is then opened by a new scheduler, as the restarted bot would.

// TestMissedSlotsRunOnceLate: a recurring job due many times while the bot
// was down runs once at the start, late, then at its next regular slot.
func TestMissedSlotsRunOnceLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		g := startRig(t, dir, newRunner(), &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{Every: "1m"})
		time.Sleep(30 * time.Second)
		g.close()
		time.Sleep(10 * time.Minute) // down: ten slots pass
		down := time.Now()
		g2 := startRig(t, dir, newRunner(), &fakeDeliverer{}, Options{})
		synctest.Wait()
		calls := g2.r.Calls()
		if len(calls) != 1 || !calls[0].Late || !calls[0].Slot.Equal(j.Next) || !calls[0].Started.Equal(down) {
			t.Fatalf("calls after restart %+v, want one late run of slot %v", calls, j.Next)
		}
		got := g2.d.Delivered()
		if len(got) != 1 || !strings.HasPrefix(got[0].Text, "(Late: this run was due at Sat 1 Jan 2000 00:01 UTC") {
			t.Fatalf("delivered %+v", got)
		}
		regular := j.Next.Add(10 * time.Minute) // the first slot after the start
		time.Sleep(time.Until(regular) + time.Second)
		synctest.Wait()
		calls = g2.r.Calls()
		if len(calls) != 2 || calls[1].Late || !calls[1].Slot.Equal(regular) {
			t.Errorf("next runs %+v, want one at slot %v", calls[1:], regular)
		}
		if st := g2.s.Stats(); st.LateRuns != 1 {
			t.Errorf("late runs %d", st.LateRuns)
		}
	})
}

// TestOneOffDueWhileDownRunsOnce: a one-off job due during a restart
// runs once after it.
func TestOneOffDueWhileDownRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		g := startRig(t, dir, newRunner(), &fakeDeliverer{}, Options{})
		g.create(t, chatA, Request{In: "3s"})
		g.close()
		time.Sleep(time.Hour)
		g2 := startRig(t, dir, newRunner(), &fakeDeliverer{}, Options{})
		synctest.Wait()
		g2.close()
		g3 := startRig(t, dir, newRunner(), &fakeDeliverer{}, Options{})
		time.Sleep(time.Hour)
		synctest.Wait()
		if len(g2.r.Calls()) != 1 || !g2.r.Calls()[0].Late || len(g2.d.Delivered()) != 1 || len(g3.r.Calls()) != 0 || len(g3.d.Tries()) != 0 {
			t.Errorf("runs %d then %d, delivered %d then %d", len(g2.r.Calls()), len(g3.r.Calls()), len(g2.d.Delivered()), len(g3.d.Tries()))
		}
	})
}

// TestKillDuringRun: a run the bot was killed during runs again once, for
// the same slot, and its answer arrives once; killed during that second
// attempt too, it is given up, the user told, and never run again.
func TestKillDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{})
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{In: "1m"})
		time.Sleep(time.Minute)
		synctest.Wait() // the run is under way
		killed := crashCopy(t, g.dir)
		killedToo := crashCopy(t, g.dir)

		r2 := newRunner()
		g2 := startRig(t, killed, r2, &fakeDeliverer{}, Options{})
		synctest.Wait()
		if c := r2.Calls(); len(c) != 1 || !c[0].Slot.Equal(j.Next) {
			t.Fatalf("after the kill: %+v", c)
		}
		if got := g2.d.Delivered(); len(got) != 1 || got[0].Text != "answer 1" {
			t.Fatalf("delivered %+v", got)
		}
		g2.close()
		g3 := startRig(t, killed, newRunner(), &fakeDeliverer{}, Options{})
		time.Sleep(time.Hour)
		synctest.Wait()
		if len(g3.r.Calls())+len(g3.d.Tries()) != 0 {
			t.Fatal("ran or delivered again")
		}

		// Killed twice during the same run: given up.
		r4 := newRunner()
		r4.gate = make(chan struct{})
		g4 := startRig(t, killedToo, r4, &fakeDeliverer{}, Options{})
		synctest.Wait()
		twice := crashCopy(t, g4.dir)
		g5 := startRig(t, twice, newRunner(), &fakeDeliverer{}, Options{})
		synctest.Wait()
		got := g5.d.Delivered()
		if len(r4.Calls()) != 1 || len(g5.r.Calls()) != 0 || len(got) != 1 || !strings.Contains(got[0].Text, "restarted during it") {
			t.Fatalf("runs %d then %d, delivered %+v", len(r4.Calls()), len(g5.r.Calls()), got)
		}
		if v := g5.s.List(chatA)[0]; v.LastRun.Outcome != Interrupted || !v.Job.Done {
			t.Errorf("view %+v %+v", v.Job, v.LastRun)
		}
	})
}

// TestKillBetweenRunAndDelivery: a run finished and not yet delivered is
// delivered after the restart, without a second run.
func TestKillBetweenRunAndDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDeliverer{gate: make(chan struct{})}
		g := startRig(t, t.TempDir(), newRunner(), d, Options{})
		g.create(t, chatA, Request{Every: "1m", Notify: "changed"})
		time.Sleep(time.Minute)
		synctest.Wait() // run done, delivery under way
		killed := crashCopy(t, g.dir)

		r2 := newRunner()
		d2 := &fakeDeliverer{}
		g2 := startRig(t, killed, r2, d2, Options{})
		synctest.Wait()
		if got := d2.Delivered(); len(r2.Calls()) != 0 || len(got) != 1 || got[0].Text != "answer 1" {
			t.Fatalf("%d runs, delivered %+v", len(r2.Calls()), got)
		}
		// The watcher's state came through: the same answer is kept back.
		r2.setAnswer(func(int, Job) (Result, error) { return Result{Answer: "answer 1"}, nil })
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(r2.Calls()) != 1 || len(d2.Tries()) != 1 {
			t.Errorf("next slot: %d runs, %d tries", len(r2.Calls()), len(d2.Tries()))
		}
		g2.close()
	})
}

// TestKillInsideDelivery: killed after Telegram took the text but before
// the ledger says so, the text is sent once more (the one window where a
// duplicate is possible; the Bot API has no idempotency key) and the job
// does not run again. Killed after the ledger says so, nothing is sent.
func TestKillInsideDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		var inside string
		d := &fakeDeliverer{hook: func(Message) {
			if inside == "" {
				inside = crashCopy(t, dir)
			}
		}}
		g := startRig(t, dir, newRunner(), d, Options{})
		g.create(t, chatA, Request{In: "1m"})
		time.Sleep(time.Minute)
		synctest.Wait()
		after := crashCopy(t, dir)

		r2, d2 := newRunner(), &fakeDeliverer{}
		g2 := startRig(t, inside, r2, d2, Options{})
		synctest.Wait()
		r3, d3 := newRunner(), &fakeDeliverer{}
		g3 := startRig(t, after, r3, d3, Options{})
		synctest.Wait()
		if len(r2.Calls()) != 0 || len(d2.Delivered()) != 1 || len(r3.Calls()) != 0 || len(d3.Tries()) != 0 {
			t.Errorf("inside: %d runs %d delivered; after: %d runs %d tries",
				len(r2.Calls()), len(d2.Delivered()), len(r3.Calls()), len(d3.Tries()))
		}
		g2.close()
		g3.close()
	})
}

// TestTornRecordAtKill: a record cut short by the kill (a power cut mid
// write) is dropped at the start, leaving the state before it: the run
// it would have started runs.
func TestTornRecordAtKill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{})
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{In: "1m"})
		time.Sleep(time.Minute)
		synctest.Wait()
		killed := crashCopy(t, g.dir)
		path := filepath.Join(killed, LedgerFile)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Cut the last record (the run's start) in half.
		lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		last := lines[len(lines)-1]
		torn := strings.Join(lines[:len(lines)-1], "") + last[:len(last)/2]
		if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
			t.Fatal(err)
		}
		r2 := newRunner()
		g2 := startRig(t, killed, r2, &fakeDeliverer{}, Options{})
		synctest.Wait()
		if c := r2.Calls(); len(c) != 1 || !c[0].Slot.Equal(j.Next) || len(g2.d.Delivered()) != 1 {
			t.Errorf("after a torn start: %+v", c)
		}
	})
}
