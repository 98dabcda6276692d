package mcpclient

import "time"

// idleTimer stops a connection's process after IdleTimeout without a
// call. Its fields are guarded by the connection's mu. Every call and
// every stop bumps gen; the timer was set at armed: a timer that fires
// after either (a stale one) sees gen moved on and stops nothing.
type idleTimer struct {
	t     *time.Timer
	gen   int
	armed int
}

// arm (re)starts the timer: stop runs after d unless a call or a stop
// comes first.
func (it *idleTimer) arm(d time.Duration, stop func()) {
	it.gen++
	it.armed = it.gen
	if it.t == nil {
		it.t = time.AfterFunc(d, stop)
	} else {
		it.t.Reset(d)
	}
}

// disarm stops the timer: a stop already on its way sees the generation
// change and does nothing.
func (it *idleTimer) disarm() {
	it.gen++
	if it.t != nil {
		it.t.Stop()
	}
}

// due reports whether nothing came since the timer was armed.
func (it *idleTimer) due() bool { return it.armed == it.gen }

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
