package fakemcp

import (
	"testing"
	"time"
)

// Escapers returns the pids of the processes an event log names as started
// to outlive the fake's tree: grandchildren (grandchild, setsid-on-sigterm),
// double-forked daemons and escapers. A dodger changes its pid: see
// Survivors.
func Escapers(events []Event) []int {
	var pids []int
	for _, ev := range events {
		if ev.Event == EventGrandchild || ev.Event == EventDaemon || ev.Event == EventEscape {
			pids = append(pids, ev.PID)
		}
	}
	return pids
}

// WaitDead polls until none of pids is alive (see Alive), and fails the
// test naming the survivors after timeout.
func WaitDead(t testing.TB, timeout time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var alive []int
		for _, p := range pids {
			if Alive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fakemcp: processes %v still alive after %v (of %v)", alive, timeout, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
