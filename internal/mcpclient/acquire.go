package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// errEnded is an acquire that found the process dead since the last call:
// the call is not made, and its result says so (the model must know that
// state such as a browser's was lost). The next call starts a new one.
type errEnded struct{ msg string }

func (e *errEnded) Error() string { return e.msg }

// acquire returns a live server, starting one if needed, and counts the
// caller in flight. A process that ended on its own since the last call is
// reported once (errEnded) before a new one starts.
func (c *connection) acquire(ctx context.Context) (srv *liveServer, err error) {
	srv, _, err = c.acquireFor(ctx, false)
	return srv, err
}

// acquireAt is acquire for a caller that read the clock at start. ready is
// when the server was handed over: start itself when it was running (the
// fast path reads no clock), the time after a start or a wait otherwise.
func (c *connection) acquireAt(ctx context.Context, start time.Time) (srv *liveServer, ready time.Time, err error) {
	srv, running, err := c.acquireFor(ctx, false)
	if running {
		return srv, start, err
	}
	return srv, time.Now(), err
}

// errNoPrewarm is a prewarm that did not start the process: no slot was
// free at once, or a call has to hear how the last process ended first.
var errNoPrewarm = errors.New("not prewarmed")

// prewarm starts the process ahead of the chat's first call, when none
// runs and a slot under the ceiling is free now: it never waits in the
// queue nor stops another chat's process. The start runs in the
// background, on the connection's WaitGroup; a call that comes meanwhile
// waits for it as for any start.
func (c *connection) prewarm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv != nil || c.state != StateNotStarted {
		return
	}
	c.goLocked(func() {
		if srv, _, err := c.acquireFor(context.Background(), true); err == nil {
			c.releaseAs(srv, false)
		}
	})
}

// warm makes the WarmCall of a prewarmed srv before the connection offers
// it to calls (they wait for the start): what it starts lazily starts
// now, and no call races it.
func (c *connection) warm(ctx context.Context, srv *liveServer) {
	w := c.cfg.WarmCall
	start := time.Now()
	_, err := srv.rpc.callTool(ctx, w.Tool, w.Args, nil, time.Time{})
	attrs := []any{"server", c.cfg.Name, "workspace", c.workspace, "call", w.Tool, "elapsed_ms", time.Since(start).Milliseconds()}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	c.deps.sp.logger.Debug("MCP server prewarmed", attrs...)
}

// acquireFor is acquire, or with prewarm the start of prewarm. running
// says that the server was running and taken at once (acquireRunning).
func (c *connection) acquireFor(ctx context.Context, prewarm bool) (srv *liveServer, running bool, err error) {
	c.use.enter()
	defer func() {
		if err != nil {
			c.use.abandon()
		}
	}()
	if srv, err = c.acquireRunning(); srv != nil || err != nil {
		return srv, srv != nil, err
	}
	srv, err = c.acquireGated(ctx, prewarm)
	return srv, false, err
}

// acquireGated is acquireFor's way when the server was not running: under
// the gate, the one someone else started meanwhile, the end of the last one
// reported, or a new one started.
func (c *connection) acquireGated(ctx context.Context, prewarm bool) (*liveServer, error) {
	select {
	case c.gate <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-c.gate }()

	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.srv != nil && !c.srv.ep.done() { // someone else started it
		srv := c.takeLiveLocked()
		c.mu.Unlock()
		return srv, nil
	}
	if dead := c.srv; dead != nil {
		if prewarm {
			c.mu.Unlock()
			return nil, errNoPrewarm // the next call reports the end
		}
		if c.clearEndedLocked(dead) {
			c.mu.Unlock()
			return nil, &errEnded{c.exitMessage(dead)}
		}
	}
	s, err := c.takeSlot(ctx, prewarm)
	if err != nil {
		return nil, err
	}
	return c.startNew(ctx, s, prewarm)
}

// acquireRunning is acquire's fast path, without the gate: the live
// process, the caller counted in flight, or the error of a closed or
// disabled connection. Neither (nil, nil): the caller takes the gate to
// start one, or to report how the last one ended.
func (c *connection) acquireRunning() (*liveServer, error) {
	c.mu.Lock()
	switch {
	case c.state == StateClosed:
		c.mu.Unlock()
		return nil, ErrClosed
	case c.state == StateDisabled:
		c.mu.Unlock()
		return nil, fmt.Errorf("MCP server %s is disabled", c.cfg.Name)
	case c.srv != nil && !c.srv.ep.done():
		srv := c.takeLiveLocked() // fast path: no gate, no start
		c.mu.Unlock()
		return srv, nil
	}
	c.mu.Unlock()
	return nil, nil
}

// takeLiveLocked hands the live process to the caller: counted in flight,
// the armed idle stop taken off. c.mu must be held.
func (c *connection) takeLiveLocked() *liveServer {
	c.inflight++
	c.idle.take()
	return c.srv
}

// clearEndedLocked takes dead, the process that ended since the last call,
// off the connection, and reports whether the caller is the call that
// reports the end (errEnded). c.mu must be held.
func (c *connection) clearEndedLocked(dead *liveServer) (report bool) {
	// It ended since the last call. Its clean-up goes on in the
	// background; this call reports the end, the next starts anew.
	// One the bot replaced (a shared process that stopped
	// answering) is no crash of the chat's: this call runs on a new
	// one, and says what was lost.
	c.recordEndLocked(dead, false)
	c.srv = nil
	if why := replacedReason(dead); why != "" && !c.rec.exit.reported {
		c.rec.exit.reported = true
		c.lost = c.lostNote(fmt.Sprintf("the %s MCP server %s since this chat's last call and was replaced", c.cfg.Name, why))
	}
	if !c.rec.exit.reported {
		c.rec.exit.reported = true
		return true
	}
	return false
}

// takeSlot takes the slot under the server's ceiling of live processes
// (maxLive) that a new process needs, nil without a ceiling: a prewarm
// only one free now, a call the first one free, waiting in line for it.
// c.mu is held on entry; it is held on return unless err is non-nil.
func (c *connection) takeSlot(ctx context.Context, prewarm bool) (s *slot, err error) {
	if lim := c.deps.limiters[c.cfg.Name]; lim != nil && prewarm {
		var ok bool
		if s, ok = lim.tryTake(c); !ok {
			c.mu.Unlock()
			return nil, errNoPrewarm
		}
	} else if lim != nil {
		return c.waitForSlot(ctx, lim)
	}
	return s, nil
}

// waitForSlot waits in lim's line for a slot (StateWaiting). c.mu is held
// on entry and released while waiting; it is held again on return unless
// err is non-nil.
func (c *connection) waitForSlot(ctx context.Context, lim *limiter) (*slot, error) {
	// A slot under the ceiling first; a stop or close of this
	// connection ends the wait.
	waitCtx, cancelWait := context.WithCancel(ctx)
	c.state, c.startCancel = StateWaiting, cancelWait
	c.mu.Unlock()
	waitStart := time.Now()
	s, err := lim.take(waitCtx, c, c.queued)
	cancelWait()
	if d := time.Since(waitStart); d > time.Millisecond {
		c.deps.observer.Waited(c.cfg.Name, d)
	}
	c.mu.Lock()
	c.startCancel = nil
	switch {
	case c.state == StateClosed:
		c.mu.Unlock()
		lim.release(c, s)
		return nil, ErrClosed
	case err != nil && ctx.Err() != nil:
		c.state = StateNotStarted
		c.mu.Unlock()
		return nil, context.Cause(ctx)
	case err != nil:
		c.state = StateNotStarted
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: the wait for a free slot was cancelled (the server was restarted)", c.cfg.Name)
	}
	return s, nil
}

// startNew starts a new process on slot s (StateStarting) and hands it to
// the caller. c.mu is held on entry and released for the start, which is
// bounded by the startup timeout (and by stop and close, which cancel
// it); it is released on return. With prewarm the process makes its
// WarmCall before any call can have it.
func (c *connection) startNew(ctx context.Context, s *slot, prewarm bool) (*liveServer, error) {
	c.state = StateStarting
	startCtx, cancel := context.WithTimeout(context.Background(), c.cfg.StartupTimeout)
	c.startCancel = cancel
	c.mu.Unlock()

	srv, err := c.start(ctx, startCtx)
	if err == nil && prewarm && c.cfg.WarmCall != nil {
		c.warm(startCtx, srv)
	}
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startedLocked(ctx, srv, s, err)
}

// startedLocked records how a start ended: srv, which now holds slot s,
// running and counted in flight; or the start's error err, slot s given
// back. A connection closed while it started ends srv in the background.
// c.mu must be held.
func (c *connection) startedLocked(ctx context.Context, srv *liveServer, s *slot, err error) (*liveServer, error) {
	c.startCancel = nil
	if srv != nil {
		srv.slot = s
	} else {
		c.releaseSlot(s)
	}
	if c.state == StateClosed { // closed while starting
		if srv != nil {
			c.wg.Go(func() { c.end(srv) })
		}
		return nil, ErrClosed
	}
	if err != nil {
		return nil, c.startFailedLocked(ctx, err)
	}
	c.srv = srv
	c.state = StateRunning
	if c.lost != "" {
		note := c.lost
		srv.note.Store(&note)
		c.lost = ""
	}
	c.deps.observer.ProcessStarted(c.cfg.Name)
	c.rec.info = srv.rpc.info
	c.rec.pid = srv.ep.processID()
	c.rec.starts++
	c.inflight++
	return srv, nil
}

// startFailedLocked records a start that failed with err, and is the
// error its caller gets: the caller's own cancellation leaves the
// connection not started; any other failure is the server's, logged and
// kept for /mcp (StateFailed). c.mu must be held.
func (c *connection) startFailedLocked(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		c.state = StateNotStarted
		return context.Cause(ctx)
	}
	c.state = StateFailed
	c.deps.observer.StartFailed(c.cfg.Name)
	c.rec.lastErr = chat.CapText(c.redact(err.Error()), MaxErrorBytes)
	c.deps.sp.logger.Warn("MCP server failed to start", "server", c.cfg.Name, "workspace", c.workspace, "err", c.rec.lastErr)
	return errors.New(c.rec.lastErr)
}

// start spawns the process in the workspace and negotiates. The start is
// bounded by startCtx (the startup timeout, cancelled by stop and close) and
// abandoned when the caller's ctx ends.
func (c *connection) start(ctx, startCtx context.Context) (*liveServer, error) {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		if c.startCancel != nil {
			c.startCancel()
		}
		c.mu.Unlock()
	})
	defer stop()
	a := c.session.asked()
	a.toolsChanged = c.toolsChanged
	srv, err := c.deps.sp.start(startCtx, c.cfg, mcpconfig.Dirs{Workspace: c.workspace, Private: c.private}, c.onExit, a)
	if err != nil {
		return nil, err
	}
	attrs := []any{"server", c.cfg.Name, "workspace", c.workspace, "protocol", srv.rpc.info.ProtocolVersion}
	if pid := srv.ep.processID(); pid != 0 {
		attrs = append(attrs, "pid", pid)
	}
	c.deps.sp.logger.Info("MCP server started", attrs...)
	if c.cfg.State != nil {
		srv.stateGate = newStateGate()
		c.restoreState(startCtx, srv)
	}
	if cat, ok := c.deps.cache.peek(c.cfg); ok {
		c.wg.Go(func() { c.checkCatalog(srv, cat) })
	}
	return srv, nil
}

// toolsChanged handles the live server's notifications/tools/list_changed:
// the catalogue is refreshed from it (debounced), and the session told, so
// that the chat's next step offers the new list. It runs in the transport's
// reader: it does not block.
func (c *connection) toolsChanged() {
	c.mu.Lock()
	srv := c.srv
	c.mu.Unlock()
	if srv == nil {
		return
	}
	c.deps.sp.logger.Debug("MCP server says its tools changed", "server", c.cfg.Name, "workspace", c.workspace)
	done := c.deps.cache.changed(c.cfg, func(ctx context.Context) (ServerInfo, []json.RawMessage, error) {
		raws, err := srv.rpc.listTools(ctx)
		return srv.rpc.info, raws, err
	})
	c.session.toolsChanged(done)
}

// checkCatalog warns when the live server's tools differ from the cached
// catalogue (a package upgraded in place). Calls go by name either way.
// Without a cached catalogue there is nothing to compare: it never starts a
// discovery of its own, which would compete with the first call.
func (c *connection) checkCatalog(srv *liveServer, cat Catalog) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.StartupTimeout)
	defer cancel()
	raws, err := srv.rpc.listTools(ctx)
	if err != nil {
		return
	}
	live, _, err := decodeTools(c.cfg.Name, raws, srv.rpc.info.ProtocolVersion)
	if err != nil {
		return
	}
	live, _, _ = filterTools(live, c.cfg) // as the catalogue has them
	live, _ = limitTools(live)
	if !sameToolNames(cat.Tools, live) {
		c.deps.sp.logger.Warn("MCP server's live tools differ from the cached catalogue; calls go by name",
			"server", c.cfg.Name, "cached", len(cat.Tools), "live", len(live))
	}
}

func sameToolNames(a, b []Tool) bool {
	if len(a) != len(b) {
		return false
	}
	names := make(map[string]bool, len(a))
	for _, t := range a {
		names[t.MCPName] = true
	}
	for _, t := range b {
		if !names[t.MCPName] {
			return false
		}
	}
	return true
}

// queued tells the chat once that its call waits for a free slot.
func (c *connection) queued(ahead int) {
	if f := c.session.queueNotice.Load(); f != nil {
		(*f)(c.cfg.Name, ahead)
	}
}
