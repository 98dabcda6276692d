package mcpclient

import (
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

// The idle timer fires after its time unless a call or a stop disarms
// it, and one that fires after a disarm (a stale AfterFunc already on its
// way) sees that it is not due.
func TestIdleTimer(t *testing.T) {
	cases := []struct {
		name    string
		between func(*idleTimer)
		due     bool // what a stop that fires now sees
		fires   bool // within two minutes of arming for one
	}{
		{"nothing came", func(*idleTimer) {}, true, true},
		{"a call took the process", (*idleTimer).disarm, false, false},
		{"re-armed by the next call's end", func(it *idleTimer) { it.arm(time.Hour, func() {}) }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var it idleTimer
				fired := make(chan struct{}, 1)
				it.arm(time.Minute, func() { fired <- struct{}{} })
				tc.between(&it)
				if got := it.due(); got != tc.due {
					t.Errorf("due = %v, want %v", got, tc.due)
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				select {
				case <-fired:
					if !tc.fires {
						t.Error("the timer fired")
					}
				default:
					if tc.fires {
						t.Error("the timer did not fire")
					}
				}
				it.disarm()
			})
		})
	}
}
