package mcpclient

import (
	"sync/atomic"
	"time"
)

// A chat's running turn holds the processes under a ceiling (maxLive) it
// calls: between two of its calls (the model thinking) another chat that
// needs one waits in line rather than stop it. The hold lapses after
// HoldIdle without a call to it, so that turns that no longer use what they
// hold (waiting for the user) cannot keep the line waiting for ever.

// DefaultHoldIdle is Options.HoldIdle unset: the longest a model step
// takes by default (session.DefaultModelTimeout), so that a turn never
// loses its browser while the model thinks.
const DefaultHoldIdle = 5 * time.Minute

// turnMark is a running turn of the session's chat (not of zero size:
// each turn's mark is a pointer of its own).
type turnMark struct{ _ byte }

// holdClock is the time of the turns' holds.
func (c *Client) holdClock() time.Time { return c.holdClockAt(time.Now()) }

// holdClockAt is holdClock for a caller that has just read the time: now,
// unless a test set the holds' clock (one clock read less a call).
func (c *Client) holdClockAt(now time.Time) time.Time {
	if c.holdNow != nil {
		return c.holdNow()
	}
	return now
}

// uses is what a connection's callers leave behind, read without the
// connection's lock (the ceiling reads it to pick an idle process to stop,
// the disk watcher to find one): the callers between acquire and release
// (starting or in flight), when the last call ended, and which of the
// chat's turns used it last, and when (the client's holdClock), for that
// turn's hold.
type uses struct {
	busy     atomic.Int32
	lastUsed atomic.Int64 // unix nanoseconds
	holdTurn atomic.Pointer[turnMark]
	holdUsed atomic.Int64 // unix nanoseconds on the holdClock
}

// enter counts a caller in (acquire).
func (u *uses) enter() { u.busy.Add(1) }

// leave counts out a caller whose call (or prewarm) ended at now
// (release). It reports whether none is left.
func (u *uses) leave(now time.Time) (none bool) {
	u.lastUsed.Store(now.UnixNano())
	return u.busy.Add(-1) == 0
}

// abandon counts out a caller that got no process (a failed acquire).
func (u *uses) abandon() { u.busy.Add(-1) }

// last is when the last call ended (unix nanoseconds).
func (u *uses) last() int64 { return u.lastUsed.Load() }

// busyNow reports whether a caller is between acquire and release.
func (u *uses) busyNow() bool { return u.busy.Load() > 0 }

// idleSince reports whether no caller is in and none left after t.
func (u *uses) idleSince(t time.Time) bool {
	return u.busy.Load() == 0 && u.lastUsed.Load() <= t.UnixNano()
}

// usedBy notes that turn t (nil: none runs) used the connection at now.
func (u *uses) usedBy(t *turnMark, now time.Time) {
	if t != nil {
		u.holdUsed.Store(now.UnixNano())
		u.holdTurn.Store(t)
	}
}

// heldBy is when turn t's hold lapses (zero: t is nil, or did not use
// it, or has not for holdIdle before now).
func (u *uses) heldBy(t *turnMark, now time.Time, holdIdle time.Duration) time.Time {
	if t == nil || u.holdTurn.Load() != t {
		return time.Time{}
	}
	until := time.Unix(0, u.holdUsed.Load()).Add(holdIdle)
	if !until.After(now) {
		return time.Time{}
	}
	return until
}

// usedInTurn notes that the running turn of the connection's chat, if
// any, used it at now (a call, or a prewarm, ended).
func (c *connection) usedInTurn(now time.Time) {
	if c.session != nil {
		c.use.usedBy(c.session.turn.Load(), c.deps.holdClockAt(now))
	}
}

// BeginTurn tells the session that a turn of its chat runs, until end is
// called (once the turn is over, stopped or failed). Until then the
// processes under a ceiling (maxLive) the turn calls are held for it:
// another chat that needs one waits in line instead of stopping it
// between two of the turn's calls, unless the turn has not called it for
// HoldIdle. end lets them go: a chat waiting for one may take it now.
func (s *Session) BeginTurn() (end func()) {
	t := &turnMark{}
	s.turn.Store(t)
	return func() {
		if !s.turn.CompareAndSwap(t, nil) {
			return
		}
		for name := range s.conns {
			if lim := s.client.limiters[name]; lim != nil {
				lim.idle()
			}
		}
	}
}

// heldUntil is when the hold of the chat's running turn on the process
// lapses (zero: not held), now on the client's holdClock. A turn holds the
// processes it has called (see Session.BeginTurn) until it ends, or until
// it has not called one for the client's holdIdle: the model thinking
// between two calls never loses the browser it is using to another chat,
// and a turn that waits a long time (for the user, say) cannot keep every
// other chat waiting for ever.
func (c *connection) heldUntil(now time.Time) time.Time {
	return c.use.heldBy(c.session.turn.Load(), now, c.deps.holdIdle)
}
