package mcpclient

import "time"

// idleTimer stops a connection's process after IdleTimeout without a
// call. Its fields are guarded by the connection's mu. Every call and
// every stop bumps gen; the stop was armed at armed, due at: a timer that
// fires after either (a stale one) sees gen moved on and stops nothing.
//
// A call costs no timer operation: taking the process only bumps gen, and
// the release's arm leaves a timer that is already set (for an earlier
// arm, so due no later) to fire; fired then sets it again for the rest.
type idleTimer struct {
	t     *time.Timer
	gen   int
	armed int
	at    time.Time // when the armed stop is due
	set   bool      // t is set to fire at or before at
}

// arm has stop run at now+d unless a call or a stop comes first. stop
// must begin with fired.
func (it *idleTimer) arm(now time.Time, d time.Duration, stop func()) {
	it.gen++
	it.armed = it.gen
	it.at = now.Add(d)
	if it.set {
		return
	}
	it.set = true
	if it.t == nil {
		it.t = time.AfterFunc(d, stop)
	} else {
		it.t.Reset(d)
	}
}

// take notes that a call took the process: the armed stop is off (the
// timer, left set, finds it so when it fires).
func (it *idleTimer) take() { it.gen++ }

// disarm stops the timer (the process is being stopped): a stop already
// on its way sees the generation change and does nothing.
func (it *idleTimer) disarm() {
	it.gen++
	it.set = false
	if it.t != nil {
		it.t.Stop()
	}
}

// fired is the timer's firing at now: it reports whether the armed stop
// is due. One armed later (calls came and went since the timer was set)
// gets the timer set again for the rest.
func (it *idleTimer) fired(now time.Time) (due bool) {
	it.set = false
	if it.armed != it.gen {
		return false // a call holds the process, or it stopped: the next release arms
	}
	if rest := it.at.Sub(now); rest > 0 {
		it.set = true
		it.t.Reset(rest)
		return false
	}
	return true
}

// What the chat's disk watcher needs of its connections: which run, and
// whether one has been idle (no call in flight, none ended) since a time;
// and a way to stop one that is idle, as an idle stop does.

// Running lists the servers whose process (or session on a shared
// process) runs for this chat.
func (s *Session) Running() []string {
	var out []string
	for name, c := range s.conns {
		c.mu.Lock()
		live := c.srv != nil && c.state == StateRunning
		c.mu.Unlock()
		if live {
			out = append(out, name)
		}
	}
	return out
}

// IdleSince reports whether name's process runs for this chat with no call
// in flight (nor starting) and none ended after t.
func (s *Session) IdleSince(name string, t time.Time) bool {
	c, ok := s.conns[name]
	if !ok || !c.use.idleSince(t) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.srv != nil && c.state == StateRunning && c.inflight == 0
}

// StopIdle stops name's process for this chat when no call is in flight
// (nor starting, nor stopping) and the chat's running turn does not hold
// it (see Session.BeginTurn), the chat's state saved first as at every
// graceful stop; the next call starts a fresh one. why is logged. It
// reports whether it stopped it.
func (s *Session) StopIdle(name, why string) bool {
	c, ok := s.conns[name]
	return ok && c.stopIdle(why)
}

func (c *connection) stopIdle(why string) bool {
	select {
	case c.gate <- struct{}{}:
	default:
		return false // starting or stopping
	}
	defer func() { <-c.gate }()
	c.mu.Lock()
	if c.inflight > 0 || c.use.busyNow() || c.srv == nil || c.state != StateRunning || !c.heldUntil(c.deps.holdClock()).IsZero() {
		c.mu.Unlock()
		return false
	}
	srv := c.srv
	c.detachLocked(srv, StateNotStarted)
	c.mu.Unlock()
	attrs := []any{"server", c.cfg.Name, "workspace", c.workspace, "reason", why}
	if pid := srv.ep.processID(); pid != 0 {
		attrs = append(attrs, "pid", pid)
	}
	c.deps.sp.logger.Warn("MCP server stopped for the chat", attrs...)
	c.probe(srv) // a Shared server that no longer answers is replaced, not saved on
	c.end(srv)
	c.forget(srv)
	return true
}
