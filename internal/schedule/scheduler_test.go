package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestInRunsAndDelivers: a job `in: 3s` runs at its time, not before,
// and its answer arrives once; the job is then done and frees its place.
func TestInRunsAndDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{In: "3s"})
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		if n := len(g.r.Calls()); n != 0 {
			t.Fatalf("%d runs before the time", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		calls := g.r.Calls()
		if len(calls) != 1 || !calls[0].Slot.Equal(j.Next) || calls[0].Late || !calls[0].Started.Equal(j.Next) {
			t.Fatalf("calls %+v, want one at %v", calls, j.Next)
		}
		got := g.d.Delivered()
		if len(got) != 1 || got[0].Text != "answer 1" || got[0].Place != chatA || got[0].Job != j.ID {
			t.Fatalf("delivered %+v", got)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		v := g.s.List(chatA)
		if len(g.r.Calls()) != 1 || len(v) != 1 || !v[0].Job.Done || v[0].LastRun.Outcome != OK ||
			v[0].Delivery.State != Delivered || v[0].Job.Tokens != 100 {
			t.Fatalf("after: %d runs, view %+v", len(g.r.Calls()), v)
		}
		if st := g.s.Stats(); st.Runs != 1 || st.Deliveries != 1 || st.Jobs != 0 || st.LateRuns != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestEveryRunsEachSlot: every 1m runs at each minute after its
// creation, each slot once.
func TestEveryRunsEachSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		start := time.Now()
		g.create(t, chatA, Request{Every: "1m"})
		time.Sleep(3*time.Minute + 30*time.Second)
		synctest.Wait()
		calls := g.r.Calls()
		if len(calls) != 3 {
			t.Fatalf("%d runs, want 3", len(calls))
		}
		for i, c := range calls {
			if want := start.Add(time.Duration(i+1) * time.Minute); !c.Slot.Equal(want) || !c.Started.Equal(want) {
				t.Errorf("run %d at %v slot %v, want %v", i+1, c.Started, c.Slot, want)
			}
		}
		if n := len(g.d.Delivered()); n != 3 {
			t.Errorf("%d delivered, want 3", n)
		}
	})
}

// TestWatcherSendsOnlyChanges: notify changed sends the first answer,
// keeps back one that differs only in white space, and sends a changed
// one with what changed first.
func TestWatcherSendsOnlyChanges(t *testing.T) {
	answers := []string{"Price: 10 EUR\nIn stock: no", "Price:  10 EUR \n\n In stock:   no", "Price: 10 EUR\nIn stock: yes"}
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.answer = func(n int, _ Job) (Result, error) { return Result{Answer: answers[min(n, 3)-1]}, nil }
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		g.create(t, chatA, Request{Every: "1m", Notify: "changed"})
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		got := g.d.Delivered()
		if len(r.Calls()) != 3 || len(got) != 2 {
			t.Fatalf("%d runs, %d delivered; want 3, 2", len(r.Calls()), len(got))
		}
		if got[0].Text != answers[0] {
			t.Errorf("first: %q", got[0].Text)
		}
		want := "What changed: 1 line(s) added, 1 removed.\n+ In stock: yes\n− In stock: no\n\n" + answers[2]
		if got[1].Text != want {
			t.Errorf("second:\n%s\nwant:\n%s", got[1].Text, want)
		}
		if st := g.s.Stats(); st.Unchanged != 1 {
			t.Errorf("unchanged %d", st.Unchanged)
		}
		// Later runs see the last answer sent.
		time.Sleep(time.Minute)
		synctest.Wait()
		if c := r.Calls(); c[3].Job.LastAnswer != answers[2] {
			t.Errorf("run 4 given %q", c[3].Job.LastAnswer)
		}
	})
}

// TestErrorsInARowToldOnce: a recurring job failing tells the user once,
// at the third failure in a row, and keeps running; a success ends the
// streak, so a new one is told again.
func TestErrorsInARowToldOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.answer = func(n int, _ Job) (Result, error) {
			if n == 6 {
				return Result{Answer: "fine"}, nil
			}
			return Result{}, errors.New("page timed out")
		}
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{Every: "1m", Notify: "changed"})
		time.Sleep(5*time.Minute + time.Second)
		synctest.Wait()
		got := g.d.Delivered()
		if len(r.Calls()) != 5 || len(got) != 1 || !strings.Contains(got[0].Text, "failed 3 times in a row") ||
			!strings.Contains(got[0].Text, j.ID) || !strings.Contains(got[0].Text, "the run failed") {
			t.Fatalf("%d runs, delivered %+v", len(r.Calls()), got)
		}
		time.Sleep(4 * time.Minute) // run 6 fine, 7, 8, 9 fail: told again
		synctest.Wait()
		got = g.d.Delivered()
		if len(got) != 3 || got[1].Text != "fine" || !strings.Contains(got[2].Text, "3 times") {
			t.Fatalf("delivered %+v", got)
		}
		v := g.s.List(chatA)[0]
		if v.Job.Paused || v.Job.Done || v.Job.Errors != 3 || v.LastRun.Outcome != Failed || v.LastRun.Error != "page timed out" {
			t.Errorf("view %+v %+v", v.Job, v.LastRun)
		}
		if st := g.s.Stats(); st.Failures != 8 || st.Runs != 9 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestOneOffFailureTold: a one-off job's failure is told at once, in the
// runner's words for the user.
func TestOneOffFailureTold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.answer = func(int, Job) (Result, error) {
			return Result{Tokens: 20000}, &Refusal{Reason: "the run hit its cap of 20000 tokens"}
		}
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		g.create(t, chatA, Request{In: "1m", Task: "remind me to call mum"})
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got := g.d.Delivered()
		want := "The scheduled task j1 (“remind me to call mum”) failed: the run hit its cap of 20000 tokens."
		if len(got) != 1 || got[0].Text != want {
			t.Fatalf("delivered %+v", got)
		}
		if v := g.s.List(chatA)[0]; !v.Job.Done || v.Job.Tokens != 20000 || v.LastRun.Tokens != 20000 {
			t.Errorf("view %+v", v)
		}
	})
}

// retryAfterErr is a 429 with its retry_after.
type retryAfterErr struct{ d time.Duration }

func (e retryAfterErr) Error() string             { return fmt.Sprintf("429: retry after %v", e.d) }
func (e retryAfterErr) RetryAfter() time.Duration { return e.d }

// TestDeliveryRetried: a 429 and a 500 are retried (the 429 not before its
// retry_after, the 500 after the backoff) and the answer arrives once,
// from one run.
func TestDeliveryRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		d := &fakeDeliverer{fail: func(n int, _ Message) error {
			at = append(at, time.Now())
			switch n {
			case 1:
				return retryAfterErr{30 * time.Second}
			case 2:
				return errors.New("500 internal server error")
			}
			return nil
		}}
		g := startRig(t, t.TempDir(), newRunner(), d, Options{})
		g.create(t, chatA, Request{In: "1m"})
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if len(g.r.Calls()) != 1 || len(d.Delivered()) != 1 || len(d.Tries()) != 3 {
			t.Fatalf("%d runs, %d tries, %d delivered", len(g.r.Calls()), len(d.Tries()), len(d.Delivered()))
		}
		if w1, w2 := at[1].Sub(at[0]), at[2].Sub(at[1]); w1 != 30*time.Second || w2 != 4*time.Second {
			t.Errorf("waits %v %v, want 30s (retry_after) and 4s (backoff)", w1, w2)
		}
		v := g.s.List(chatA)[0]
		if v.Delivery.State != Delivered || v.Delivery.Attempts != 3 {
			t.Errorf("delivery %+v", v.Delivery)
		}
		if st := g.s.Stats(); st.DeliveryRetries != 2 || st.Deliveries != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestPermanentFailurePausesJob: a 403 (the chat is gone) is not retried;
// the job is paused with the reason and runs no more until resumed.
func TestPermanentFailurePausesJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDeliverer{fail: func(n int, _ Message) error {
			if n == 1 {
				return Permanent("the bot was blocked by the user", errors.New("403 Forbidden"))
			}
			return nil
		}}
		g := startRig(t, t.TempDir(), newRunner(), d, Options{})
		j := g.create(t, chatA, Request{Every: "1m"})
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		v := g.s.List(chatA)[0]
		if len(g.r.Calls()) != 1 || len(d.Tries()) != 1 || !v.Job.Paused || v.Job.PauseReason != "the bot was blocked by the user" ||
			v.Delivery.State != Refused {
			t.Fatalf("%d runs %d tries; view %+v %+v", len(g.r.Calls()), len(d.Tries()), v.Job, v.Delivery)
		}
		if st := g.s.Stats(); st.DeliveryFailures != 1 || st.Paused != 1 {
			t.Errorf("stats %+v", st)
		}
		if _, err := g.s.Resume(chatA, j.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(g.r.Calls()) != 2 || len(d.Delivered()) != 1 {
			t.Errorf("after resume: %d runs, %d delivered", len(g.r.Calls()), len(d.Delivered()))
		}
	})
}

// TestJobLimitPerChat: the 21st job of a chat is refused with the reason;
// another chat is not counted; a cancelled job frees its place.
func TestJobLimitPerChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		var first Job
		for i := range 20 {
			j := g.create(t, chatA, Request{Every: "1h"})
			if i == 0 {
				first = j
			}
		}
		_, err := g.s.Create(chatA, 7, Request{Task: "x", Every: "1h"})
		var ref *Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "already has 20 scheduled jobs") {
			t.Fatalf("21st: %v", err)
		}
		g.create(t, chatB, Request{Every: "1h"})
		// A forum topic counts with its chat.
		if _, err := g.s.Create(Place{Chat: chatA.Chat, Topic: 5}, 7, Request{Task: "x", In: "1h"}); !errors.As(err, &ref) {
			t.Fatalf("a topic's 21st: %v", err)
		}
		if _, err := g.s.Cancel(chatA, first.ID); err != nil {
			t.Fatal(err)
		}
		g.create(t, chatA, Request{Every: "1h"})
	})
}

// TestChatsApart: a chat lists only its own jobs and cannot cancel,
// resume or run another's.
func TestChatsApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		a := g.create(t, chatA, Request{Every: "1h", Task: "A's task"})
		b := g.create(t, chatB, Request{Every: "1h", Task: "B's task"})
		if la, lb := g.s.List(chatA), g.s.List(chatB); len(la) != 1 || la[0].Job.ID != a.ID || len(lb) != 1 || lb[0].Job.ID != b.ID {
			t.Fatalf("lists %+v %+v", la, lb)
		}
		if _, err := g.s.Cancel(chatB, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("cancel across chats: %v", err)
		}
		if _, err := g.s.Resume(chatB, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("resume across chats: %v", err)
		}
		if err := g.s.RunNow(chatB, a.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("run across chats: %v", err)
		}
		if len(g.s.All()) != 2 {
			t.Errorf("all: %+v", g.s.All())
		}
		if _, err := g.s.CancelAny(a.ID); err != nil {
			t.Fatal(err)
		}
		if len(g.s.List(chatA)) != 0 {
			t.Error("cancelled job listed")
		}
	})
}

// TestParallelism: runs of one chat go one at a time, runs of different
// chats in parallel, at most MaxParallel at once.
func TestParallelism(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.answer = func(int, Job) (Result, error) {
			time.Sleep(10 * time.Second)
			return Result{Answer: "ok"}, nil
		}
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{MaxParallel: 3})
		for c := range 5 {
			for range 4 {
				g.create(t, Place{Chat: int64(c + 1)}, Request{In: "1m"})
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		r.mu.Lock()
		peak, chatPeak, all := r.peak, r.chatPeak, r.all
		r.mu.Unlock()
		if all != 3 {
			t.Errorf("%d running at once, want 3", all)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if peak != 3 || chatPeak != 1 || len(g.d.Delivered()) != 20 {
			t.Errorf("peak %d (want 3), chat peak %d (want 1), %d delivered", peak, chatPeak, len(g.d.Delivered()))
		}
	})
}

// TestCancelDuringRun: cancelling a running job stops its run; nothing
// is sent and it runs no more.
func TestCancelDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{})
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{Every: "1m"})
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := g.s.Stats(); st.Running != 1 {
			t.Fatalf("running %d", st.Running)
		}
		if _, err := g.s.Cancel(chatA, j.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if len(r.Calls()) != 1 || len(g.d.Tries()) != 0 || len(g.s.All()) != 0 {
			t.Errorf("%d runs, %d tries, %d jobs", len(r.Calls()), len(g.d.Tries()), len(g.s.All()))
		}
	})
}

// TestRunNow: Run now runs a job at once, leaves its schedule as it was,
// and refuses a second while the first runs.
func TestRunNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{})
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{})
		j := g.create(t, chatA, Request{Cron: "0 8 * * *"})
		time.Sleep(time.Second)
		if err := g.s.RunNow(chatA, j.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		var ref *Refusal
		if err := g.s.RunNow(chatA, j.ID); !errors.As(err, &ref) {
			t.Errorf("second run now: %v", err)
		}
		r.gate <- struct{}{}
		synctest.Wait()
		v := g.s.List(chatA)[0]
		if len(r.Calls()) != 1 || len(g.d.Delivered()) != 1 || !v.Job.Next.Equal(j.Next) {
			t.Errorf("%d runs, %d delivered, next %v (was %v)", len(r.Calls()), len(g.d.Delivered()), v.Job.Next, j.Next)
		}
	})
}

// TestCloseWaits: Close returns with a run and a delivery retry under
// way, and leaves no goroutine behind (synctest fails a test whose
// bubble still has goroutines).
func TestCloseWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{})
		d := &fakeDeliverer{fail: func(int, Message) error { return errors.New("network down") }}
		g := startRig(t, t.TempDir(), r, d, Options{})
		g.create(t, chatA, Request{In: "1m"})
		g.create(t, chatB, Request{In: "2m"})
		time.Sleep(90 * time.Second)
		synctest.Wait()
		r.gate <- struct{}{} // chatA's run ends; its delivery retries
		time.Sleep(time.Minute)
		synctest.Wait() // chatB's run waits on the gate
		if st := g.s.Stats(); st.Running != 1 || st.PendingDeliveries != 1 || st.DeliveryRetries == 0 {
			t.Fatalf("stats %+v", st)
		}
		g.close()
		if _, err := g.s.Create(chatA, 1, Request{Task: "x", In: "1h"}); !errors.Is(err, ErrClosed) {
			t.Errorf("create after close: %v", err)
		}
	})
}

// TestStartTwice: a scheduler starts once.
func TestStartTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		if err := g.s.Start(context.Background()); err == nil {
			t.Error("started twice")
		}
	})
}

// TestDueInOrder: a chat's jobs due together run one by one in the order
// they were due, then created.
func TestDueInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := startRig(t, t.TempDir(), newRunner(), &fakeDeliverer{}, Options{})
		for _, in := range []string{"2m", "1m", "2m", "2m", "1m"} {
			g.create(t, chatA, Request{In: in})
		}
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		var got []string
		for _, c := range g.r.Calls() {
			got = append(got, c.Job.ID)
		}
		if strings.Join(got, " ") != "j2 j5 j1 j3 j4" {
			t.Errorf("order %v", got)
		}
	})
}

// TestRunTimeout: a run over RunTimeout is stopped and the user told
// why; a run that answered as the bot stopped keeps its answer (sent at
// the next start), one that did not runs again.
func TestRunTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.gate = make(chan struct{}) // never opened: every run waits for its end
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{RunTimeout: 5 * time.Minute})
		g.create(t, chatA, Request{In: "1m", Task: "loop forever"})
		time.Sleep(7 * time.Minute)
		synctest.Wait()
		got := g.d.Delivered()
		if len(got) != 1 || !strings.HasSuffix(got[0].Text, "failed: it ran longer than 5m.") {
			t.Errorf("delivered %+v", got)
		}
	})
}

// stoppingRunner stops the scheduler during its run, and answers all
// the same once the run's context has ended.
type stoppingRunner struct{ s *Scheduler }

func (r *stoppingRunner) RunJob(ctx context.Context, _ Job, _ time.Time, _ bool) (Result, error) {
	go r.s.Close()
	<-ctx.Done()
	return Result{Answer: "answered as it stopped"}, nil
}

// TestAnsweredAsStopping: a run that answers while the bot stops keeps
// its answer, delivered at the next start without a second run.
func TestAnsweredAsStopping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		l, err := OpenLedger(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, d := &stoppingRunner{}, &fakeDeliverer{}
		r.s = New(l, r, d, nil, Options{})
		if err := r.s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := r.s.Create(chatA, 1, Request{Task: "x", In: "1m"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		r.s.Close()
		l.Close()
		r2, d2 := newRunner(), &fakeDeliverer{}
		startRig(t, dir, r2, d2, Options{})
		synctest.Wait()
		got := d2.Delivered()
		if len(r2.Calls()) != 0 || len(got) != 1 || got[0].Text != "answered as it stopped" || len(d.Tries()) != 0 {
			t.Errorf("%d runs, delivered %+v (%d tries before)", len(r2.Calls()), got, len(d.Tries()))
		}
	})
}
