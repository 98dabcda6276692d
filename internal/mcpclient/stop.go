package mcpclient

import (
	"fmt"
	"time"
)

// release ends a call: the idle timer starts when nothing is in flight, and
// the ceiling's first waiter may take this process's slot. It returns when
// the call ended (the clock read for the idle timer).
func (c *connection) release(srv *liveServer) (now time.Time) { return c.releaseAs(srv, true) }

// releaseAs is release; called says a call ran (a prewarm's did not).
func (c *connection) releaseAs(srv *liveServer, called bool) (now time.Time) {
	now = time.Now()
	c.usedInTurn(now)
	if c.use.leave(now) {
		if lim := c.deps.limiters[c.cfg.Name]; lim != nil {
			defer lim.idle() // after c.mu is released: the limiter reads busy, not c.mu
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	if srv.ep.done() && c.inflight == 0 && c.srv == srv {
		srv.ep.closeTransport()
	}
	if called && c.cfg.State != nil && c.srv == srv && !srv.ep.done() {
		c.stateDirtyLocked(srv)
	}
	if c.inflight == 0 && c.srv == srv && c.cfg.IdleTimeout > 0 {
		c.idle.arm(now, c.cfg.IdleTimeout, c.idleStop)
	}
	return now
}

// idleStop stops the process if no call has come for IdleTimeout (the
// idle timer fired).
func (c *connection) idleStop() {
	c.gate <- struct{}{}
	defer func() { <-c.gate }()
	c.mu.Lock()
	if !c.idle.fired(time.Now()) || c.inflight > 0 || c.srv == nil || c.state == StateClosed {
		c.mu.Unlock()
		return
	}
	srv := c.srv
	c.detachLocked(srv, StateNotStarted)
	c.mu.Unlock()
	attrs := []any{"server", c.cfg.Name, "idle_s", int(c.cfg.IdleTimeout.Seconds())}
	if pid := srv.ep.processID(); pid != 0 {
		attrs = append(attrs, "pid", pid)
	}
	c.deps.sp.logger.Info("MCP server stopped after idle timeout", attrs...)
	c.probe(srv)
	c.end(srv)
	c.forget(srv)
}

// evict stops the process for another chat that needs its slot, when it
// is idle: nothing in flight, nothing starting or stopping, not held by
// its chat's running turn. It reports whether it did.
func (c *connection) evict() bool {
	select {
	case c.gate <- struct{}{}:
	default:
		return false // starting or stopping
	}
	defer func() { <-c.gate }()
	c.mu.Lock()
	if c.inflight > 0 || c.use.busyNow() || c.srv == nil || c.state == StateClosed || !c.heldUntil(c.deps.holdClock()).IsZero() {
		c.mu.Unlock()
		return false
	}
	srv := c.srv
	c.detachLocked(srv, StateNotStarted)
	c.rec.evictions++
	c.lost = c.lostNote(fmt.Sprintf("this chat's %s was closed since its last call, to free a place for another chat (at most %d run at once)",
		c.noun(), c.deps.limiters[c.cfg.Name].limit))
	c.mu.Unlock()
	c.deps.observer.Evicted(c.cfg.Name)
	attrs := []any{"server", c.cfg.Name, "workspace", c.workspace}
	if pid := srv.ep.processID(); pid != 0 {
		attrs = append(attrs, "pid", pid)
	}
	c.deps.sp.logger.Info("MCP server stopped to free a slot for another chat (maxLive)", attrs...)
	c.probe(srv)
	c.end(srv)
	c.forget(srv)
	return true
}

// end terminates srv and gives its slot back once the process is gone. A
// server that still runs saves the chat's state first (State).
func (c *connection) end(srv *liveServer) {
	if c.cfg.State != nil && !srv.ep.done() {
		c.saveState(srv)
	}
	srv.terminate()
	c.releaseSlot(srv.slot)
}

func (c *connection) releaseSlot(s *slot) {
	if lim := c.deps.limiters[c.cfg.Name]; lim != nil {
		lim.release(c, s)
	}
}

// detachLocked takes srv off the connection before it is stopped on purpose.
func (c *connection) detachLocked(srv *liveServer, next State) {
	c.stopping[srv] = true
	c.rec.tail = srv.ep.tailLines()
	c.srv = nil
	c.state = next
	c.idle.disarm()
}

func (c *connection) forget(srv *liveServer) {
	c.mu.Lock()
	delete(c.stopping, srv)
	c.mu.Unlock()
}

// stop stops the process (if any) and leaves the connection usable: the next
// call starts a fresh process. A failed state resets to not started; the
// last error stays for /mcp <name>.
func (c *connection) stop() {
	c.shutdown(StateNotStarted)
}

// close stops the process for good and waits for the connection's
// background work. Idempotent.
func (c *connection) close() {
	c.shutdown(StateClosed)
	c.wg.Wait()
}

func (c *connection) shutdown(next State) {
	c.mu.Lock()
	if c.startCancel != nil {
		c.startCancel() // abandon a start in progress
	}
	if next == StateClosed {
		c.state = StateClosed // seen by a start in progress
	}
	c.mu.Unlock()

	c.gate <- struct{}{}
	defer func() { <-c.gate }()
	c.mu.Lock()
	srv := c.srv
	keep := c.state == StateDisabled
	if srv != nil {
		c.detachLocked(srv, next)
	} else {
		c.idle.disarm()
	}
	if keep && next != StateClosed {
		c.state = StateDisabled
	} else if srv == nil && c.state != StateClosed {
		c.state = next
	}
	c.lost = "" // the chat stopped it: nothing to tell
	c.mu.Unlock()
	if h := c.deps.sp.hosts[c.cfg.Name]; srv == nil && h != nil && next != StateClosed {
		// No session of the chat's to ping: the shared process itself is
		// asked (/mcp restart of a chat whose session ended since).
		h.probe(stopPingTimeout)
	}
	if srv == nil {
		return
	}
	// A Shared server that does not answer is replaced now (for every
	// chat): nothing can be saved on it, and its end is not waited for.
	c.probe(srv)
	if srv.ep.done() && next != StateClosed {
		c.mu.Lock()
		c.goLocked(func() {
			c.end(srv)
			c.forget(srv)
		})
		c.mu.Unlock()
		return
	}
	c.end(srv)
	c.forget(srv)
}
