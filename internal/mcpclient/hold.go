package mcpclient

import "time"

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
func (c *Client) holdClock() time.Time {
	if c.holdNow != nil {
		return c.holdNow()
	}
	return time.Now()
}

// usedInTurn notes that the running turn of the connection's chat, if
// any, used it now (a call, or a prewarm, ended).
func (c *connection) usedInTurn() {
	if c.session == nil {
		return
	}
	if t := c.session.turn.Load(); t != nil {
		c.holdUsed.Store(c.deps.holdClock().UnixNano())
		c.holdTurn.Store(t)
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
	t := c.session.turn.Load()
	if t == nil || c.holdTurn.Load() != t {
		return time.Time{} // no turn runs, or it has not called it
	}
	until := time.Unix(0, c.holdUsed.Load()).Add(c.deps.holdIdle)
	if !until.After(now) {
		return time.Time{}
	}
	return until
}
