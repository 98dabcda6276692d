// Package testkit holds what tests of several packages share: waiting
// for a condition without guessing how long it takes, a log buffer a
// goroutine writes while the test reads it, and a settable clock.
//
// A test waits on an event: a channel, a fake's event log, a hook. Where
// the only sign is a state (a file appears, a process is gone, a log line
// is written), it polls that state with WaitFor, under a deadline
// generous enough for a loaded machine: the deadline only bounds a
// failure, a passing test waits no longer than the state takes. Never
// sleep for a while and look.
package testkit

import (
	"testing"
	"time"
)

// PollEvery is how often WaitFor and Until look at their condition.
const PollEvery = 10 * time.Millisecond

// WaitFor polls cond until it holds, and fails tb (from the test's
// goroutine) when it has not within d; what names the awaited state in
// the failure.
func WaitFor(tb testing.TB, what string, d time.Duration, cond func() bool) {
	tb.Helper()
	if !Until(d, cond) {
		tb.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// Until polls cond until it holds or d passes, and reports whether it
// held: WaitFor for a goroutine that may not fail the test.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollEvery)
	}
	return true
}
