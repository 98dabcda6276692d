package testkit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	var n atomic.Int32
	if !Until(time.Minute, func() bool { return n.Add(1) == 3 }) {
		t.Fatal("Until gave up on a condition that came true")
	}
	if n.Load() != 3 {
		t.Errorf("cond called %d times, want 3 (it stops once it holds)", n.Load())
	}
	if Until(3*PollEvery, func() bool { return false }) {
		t.Error("Until reported a condition that never held")
	}
}

// fatalTB records a Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = format
}

func TestWaitForFails(t *testing.T) {
	tb := &fatalTB{TB: t}
	WaitFor(tb, "nothing", 2*PollEvery, func() bool { return false })
	if tb.msg == "" {
		t.Error("WaitFor did not fail on a condition that never held")
	}
	tb = &fatalTB{TB: t}
	WaitFor(tb, "something", time.Minute, func() bool { return true })
	if tb.msg != "" {
		t.Errorf("WaitFor failed on a condition that held: %s", tb.msg)
	}
}

func TestDeadlineOnCue(t *testing.T) {
	ctx, expire := DeadlineOnCue(context.Background())
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if ctx.Err() != nil || child.Err() != nil {
		t.Fatal("ended before its cue")
	}
	expire()
	expire() // twice is fine
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("Err = %v, a child's %v; want context.DeadlineExceeded", ctx.Err(), child.Err())
	}
}
