package mcpclient

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A turn's hold on a connection: only the turn that used it last holds
// it, and only until holdIdle after that use.
func TestUsesHeldBy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a, b := &turnMark{}, &turnMark{}
	const idle = time.Minute
	cases := []struct {
		name  string
		used  *turnMark // the turn that used it (nil: none)
		asked *turnMark // the turn that runs now
		now   time.Time
		want  time.Time
	}{
		{"no turn runs", a, nil, t0, time.Time{}},
		{"never used", nil, a, t0, time.Time{}},
		{"used by this turn", a, a, t0.Add(time.Second), t0.Add(idle)},
		{"used by an earlier turn", a, b, t0.Add(time.Second), time.Time{}},
		{"lapsed at holdIdle", a, a, t0.Add(idle), time.Time{}},
		{"lapsed after", a, a, t0.Add(2 * idle), time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var u uses
			u.usedBy(tc.used, t0)
			if got := u.heldBy(tc.asked, tc.now, idle); !got.Equal(tc.want) {
				t.Errorf("heldBy = %v, want %v", got, tc.want)
			}
		})
	}
}

// The callers' count and the last use, as the ceiling and the disk
// watcher read them.
func TestUsesCountsCallers(t *testing.T) {
	var u uses
	t0 := time.Unix(1000, 0)
	if u.busyNow() || !u.idleSince(t0) {
		t.Fatal("a new connection is busy")
	}
	u.enter()
	u.enter()
	if !u.busyNow() || u.idleSince(t0) {
		t.Fatal("two callers in, not busy")
	}
	u.abandon() // an acquire that failed leaves no use behind
	if u.last() != 0 {
		t.Fatalf("last = %d after an abandoned acquire", u.last())
	}
	if none := u.leave(t0.Add(time.Second)); !none {
		t.Fatal("the last caller out left someone in")
	}
	if u.busyNow() || u.idleSince(t0) || !u.idleSince(t0.Add(time.Second)) {
		t.Fatalf("after the last call: busy %v, idle since t0 %v", u.busyNow(), u.idleSince(t0))
	}
}

// The idle timer stops the process IdleTimeout after the last call's end
// unless a call or a stop comes first. Calls cost no timer operation: a
// timer set for an earlier arm fires early, finds the stop armed later and
// sets itself for the rest; one that fires after a call took the process
// or a stop disarmed it (a stale AfterFunc already on its way) stops
// nothing.
func TestIdleTimer(t *testing.T) {
	cases := []struct {
		name    string
		between func(it *idleTimer, arm func(time.Duration))
		stopAt  time.Duration // from the first arm; 0: never (within two hours)
		fires   int           // how often the timer fires in two hours
	}{
		{"nothing came", func(*idleTimer, func(time.Duration)) {}, time.Minute, 1},
		{"a call took the process", func(it *idleTimer, _ func(time.Duration)) { it.take() }, 0, 1},
		{"stopped", func(it *idleTimer, _ func(time.Duration)) { it.disarm() }, 0, 0},
		{"re-armed by the next call's end", func(it *idleTimer, arm func(time.Duration)) {
			time.Sleep(30 * time.Second)
			it.take()
			arm(time.Hour)
		}, 30*time.Second + time.Hour, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					mu      sync.Mutex
					it      idleTimer
					fires   int
					stopped time.Duration
				)
				start := time.Now()
				stop := func() {
					mu.Lock()
					defer mu.Unlock()
					fires++
					if it.fired(time.Now()) {
						stopped = time.Since(start)
					}
				}
				arm := func(d time.Duration) { it.arm(time.Now(), d, stop) }
				mu.Lock()
				arm(time.Minute)
				mu.Unlock()
				func() {
					mu.Lock()
					defer mu.Unlock()
					tc.between(&it, arm)
				}()
				time.Sleep(2 * time.Hour)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if stopped != tc.stopAt || fires != tc.fires {
					t.Errorf("stopped at %v after %d firings, want %v after %d", stopped, fires, tc.stopAt, tc.fires)
				}
				it.disarm()
			})
		})
	}
}
