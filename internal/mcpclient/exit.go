package mcpclient

import (
	"fmt"
	"strings"
	"syscall"
)

// exitRecord is the last process that ended on its own (a crash): what
// /mcp <name> shows of it after the next call started another, and whether
// a call was told.
type exitRecord struct {
	srv      *liveServer // its endpoint keeps the stderr tail
	ending   ending      // how it ended, as first seen
	reason   string      // "exited (3)"
	reported bool        // a call's result said so
	oom      bool        // the kernel's OOM killer ended it
}

// killedForMemory reports whether srv's process, which ended on its own,
// was killed by the kernel's OOM killer: it died of SIGKILL, which the bot
// did not send, as the count of OOM kills rose.
func (c *connection) killedForMemory(srv *liveServer) bool {
	w := c.deps.oom
	if w == nil || c.stopping[srv] || !srv.ep.done() || srv.ep.exitDescription() != "signal: "+syscall.SIGKILL.String() {
		return false
	}
	return w.check(c.cfg.Name)
}

// killedOOM reports whether srv's end was recorded as the OOM killer's.
func (c *connection) killedOOM(srv *liveServer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rec.exit != nil && c.rec.exit.srv == srv && c.rec.exit.oom
}

// exitMessage is the error a call gets when its process died.
// How it ended is the end's record (the stop that follows a transport
// failure is not the cause), or how it looks now when none was made.
func (c *connection) exitMessage(srv *liveServer) string {
	c.mu.Lock()
	stopped := c.stopping[srv]
	var e ending
	if c.rec.exit != nil && c.rec.exit.srv == srv {
		e = c.rec.exit.ending
	} else {
		e = srv.ep.ending()
	}
	c.mu.Unlock()
	if stopped {
		return fmt.Sprintf("%s MCP server was stopped during the call. It restarts on the next call.", c.cfg.Name)
	}
	msg := c.redact(srv.ep.endMessage(c.cfg.Name, e))
	if c.killedOOM(srv) {
		msg = fmt.Sprintf("The bot's machine ran out of memory: the kernel killed the %s MCP server. ", c.cfg.Name) + msg
	}
	return msg
}

// onExit runs in the exit watcher of a process of the connection, once it
// has exited.
func (c *connection) onExit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	srv := c.srv
	if srv == nil || !srv.ep.done() {
		return // stopped on purpose, replaced, or still starting
	}
	c.recordEndLocked(srv, false)
	if c.inflight == 0 {
		c.goLocked(srv.ep.closeTransport)
	}
	attrs := []any{"server", c.cfg.Name, "code", srv.ep.exitDescription()}
	if pid := srv.ep.processID(); pid != 0 {
		attrs = append(attrs, "pid", pid)
	}
	if tail := srv.ep.tailLines(); len(tail) > 0 {
		attrs = append(attrs, "stderr", strings.Join(tail, "\n"))
	}
	c.deps.sp.logger.Warn("MCP server exited", attrs...)
}

// recordEnd is recordEndLocked for the call path, which holds no lock.
func (c *connection) recordEnd(srv *liveServer, reported bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordEndLocked(srv, reported)
}

// recordEndLocked records that srv's endpoint ended on its own (its exit
// watcher, a call that saw it and the next acquire all may; the first
// records it): the state and reason /mcp shows, and the tail kept after the
// next start. reported says the caller tells a call. c.mu must be held.
func (c *connection) recordEndLocked(srv *liveServer, reported bool) {
	if c.rec.exit == nil || c.rec.exit.srv != srv {
		e := srv.ep.ending()
		c.rec.exit = &exitRecord{srv: srv, ending: e, reason: c.redact(e.reason)}
		if c.killedForMemory(srv) {
			c.rec.exit.oom = true
			c.rec.exit.reason += ": killed by the kernel, out of memory"
		}
		if c.srv == srv {
			c.state, c.rec.lastErr = stateOf(e.kind), c.rec.exit.reason
		}
		// A server whose transport failed still runs: stop it now rather
		// than at the next call (and free its slot once it is gone).
		c.goLocked(func() { c.end(srv) })
	}
	c.rec.exit.reported = c.rec.exit.reported || reported
}
