package fakemcp

import (
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
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
	var alive []int
	if !testkit.Until(timeout, func() bool {
		alive = alive[:0]
		for _, p := range pids {
			if Alive(p) {
				alive = append(alive, p)
			}
		}
		return len(alive) == 0
	}) {
		t.Fatalf("fakemcp: processes %v still alive after %v (of %v)", alive, timeout, pids)
	}
}
