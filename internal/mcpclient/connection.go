package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// State is a connection's state as /mcp shows it.
type State int

const (
	StateNotStarted State = iota
	StateStarting
	StateRunning
	StateExited // the process ended since the last call; the next call respawns it
	// StateDisconnected: an HTTP server's connection failed; the next call
	// opens a new one.
	StateDisconnected
	StateFailed // the last start failed
	StateDisabled
	StateClosed
	// StateWaiting: a call waits for a free slot under the server's
	// ceiling of live processes (maxLive).
	StateWaiting
)

func (s State) String() string {
	switch s {
	case StateNotStarted:
		return "not started"
	case StateStarting:
		return "starting"
	case StateRunning:
		return "running"
	case StateExited:
		return "exited (restarts on the next call)"
	case StateDisconnected:
		return "disconnected (reconnects on the next call)"
	case StateFailed:
		return "failed"
	case StateDisabled:
		return "disabled"
	case StateClosed:
		return "closed"
	case StateWaiting:
		return "waiting for a free slot"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// stateOf is the state /mcp shows for an endpoint that ended that way.
func stateOf(k endKind) State {
	if k == endDisconnected {
		return StateDisconnected
	}
	return StateExited
}

// ErrClosed is returned by calls on a closed connection or session: the
// session is shutting down, and the caller should stop.
var ErrClosed = errors.New("mcp connection closed")

// connection is one server's process for one chat: started lazily by the
// first call in the chat's workspace, stopped when idle, restarted after a
// crash by the next call.
//
// Two locks: gate (a one-slot channel, so waiting honours the caller's
// context) serialises starting and stopping; mu guards the fields below and
// is never held across I/O. A call takes its process and counts itself in
// flight under mu; the idle stop re-checks the count under the gate and mu,
// so it never kills a process a call has just been handed.
//
// Work done in the background (the catalogue check of a new process, the
// clean-up of a dead one) runs on wg, which close waits for.
type connection struct {
	cfg       mcpconfig.ServerConfig
	workspace string
	private   string // the bot's private folder of the chat ("": none)
	deps      *Client

	gate chan struct{}
	wg   sync.WaitGroup

	// busy counts the callers between acquire and release (starting or in
	// flight), lastUsed is when the last call ended (unix nanoseconds): what
	// the ceiling reads, without c.mu, to pick an idle process to stop.
	busy     atomic.Int32
	lastUsed atomic.Int64
	session  *Session // for the queue notice
	// holdTurn is the chat's turn that used it last, and holdUsed when
	// (the client's holdClock, unix nanoseconds): what a turn's hold reads
	// (heldUntil).
	holdTurn atomic.Pointer[turnMark]
	holdUsed atomic.Int64

	mu          sync.Mutex
	srv         *liveServer
	state       State
	inflight    int
	idle        *time.Timer
	savedAt     time.Time   // the last save of the chat's state (State)
	stateDirty  bool        // a call ended since
	saveTimer   *time.Timer // the save that waits for stateSaveEvery
	idleGen     int         // bumped by every call and stop: a stale timer sees it
	idleArmed   int         // idleGen when the timer was last set
	lastErr     string
	tail        []string // stderr tail of the last process stopped on purpose
	exit        *exitRecord
	info        ServerInfo
	pid         int
	starts      int
	evictions   int // processes stopped to free a slot for another chat
	startCancel context.CancelFunc
	stopping    map[*liveServer]bool // processes being stopped on purpose
	// lost is what the next call on a new process says (lostNote): the
	// chat's last one was taken away (another chat's need, a replacement);
	// "" when the chat stopped it itself, or it is still there.
	lost string
}

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

func newConnection(cfg mcpconfig.ServerConfig, workspace, private string, deps *Client, session *Session) *connection {
	c := &connection{cfg: cfg, workspace: workspace, private: private, deps: deps, session: session, gate: make(chan struct{}, 1),
		stopping: map[*liveServer]bool{}}
	if !cfg.Enabled {
		c.state = StateDisabled
	}
	return c
}

// errEnded is an acquire that found the process dead since the last call:
// the call is not made, and its result says so (the model must know that
// state such as a browser's was lost). The next call starts a new one.
type errEnded struct{ msg string }

func (e *errEnded) Error() string { return e.msg }

// call runs one tool call. Failures of the server become error results; only
// the caller's own cancellation (and ErrClosed) is returned as an error.
func (c *connection) call(ctx context.Context, tool Tool, args json.RawMessage) (res Result, err error) {
	start := time.Now()
	defer func() {
		// Every call is counted: one the caller gave up on (/stop, the
		// turn's end, the bot's shutdown) as cancelled.
		outcome := CallOK
		switch {
		case err != nil:
			outcome = CallCancelled
		case res.IsError:
			outcome = CallError
		}
		c.deps.observer.CallDone(c.cfg.Name, time.Since(start), outcome)
	}()
	srv, err := c.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return Result{}, err
		}
		return ErrorResult(c.cfg.Name, tool.Name, err.Error()), nil
	}
	defer c.release(srv)

	var deadline time.Time
	if c.cfg.CallTimeout > 0 {
		deadline = time.Now().Add(c.cfg.CallTimeout)
	}
	var contexts int32
	if c.cfg.State != nil {
		if contexts, err = c.beforeStateCall(ctx, srv, tool); err != nil {
			return Result{}, context.Cause(ctx)
		}
	}
	stopWatch := c.watch(srv)
	raw, err := srv.rpc.callTool(ctx, tool.MCPName, args, tool.ParamHeaders, deadline)
	stopWatch()
	if c.cfg.State != nil {
		srv.stateGate.Release(1)
	}
	if note := srv.note.Swap(nil); note != nil {
		defer func() {
			if err == nil {
				res.Content = append(res.Content, chat.Part{Kind: chat.TextPart, Text: *note})
			} else {
				srv.note.CompareAndSwap(nil, note) // for the next call
			}
		}()
	}
	if err == nil {
		fresh := c.cfg.State != nil && c.freshContext(ctx, srv, tool, contexts)
		if c.cfg.State != nil {
			adoptContext(srv)
		}
		res, err := mapValidResult(c.cfg.Name, tool.Name, raw)
		if err != nil {
			return ErrorResult(c.cfg.Name, tool.Name, fmt.Sprintf("%s: invalid result: %v", tool.Name, err)), nil
		}
		if fresh && !res.IsError {
			res.Content = append(res.Content, chat.Part{Kind: chat.TextPart, Text: "Note: the browser had stopped (it crashed, or was closed) " +
				"and this call ran in a new one: the chat's other tabs are gone, and its cookies and storage were restored only after " +
				"this call. If the page needed a login, repeat the step."})
		}
		// Inlined files count against the cap: as many bytes as the cap
		// has tokens times four, then the cap itself.
		inlineLinkedFiles(&res, srv.dir, c.workspace, c.deps.maxResultTokens*4-len(res.Text()))
		c.bound(&res, tool)
		return res, nil
	}
	var rpcErr *RPCError
	var inErr *inputError
	switch {
	case errors.As(err, &rpcErr):
		msg := fmt.Sprintf("%s: %s", tool.Name, rpcErr.Error())
		if c.vanished(tool) {
			msg += fmt.Sprintf(". The %s MCP server no longer offers %s: its tool list changed", c.cfg.Name, tool.MCPName)
		}
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(msg)), nil
	case errors.As(err, &inErr):
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %s", tool.Name, inErr.reason))), nil
	case errors.Is(err, errCallTimeout) && ctx.Err() == nil:
		msg := fmt.Sprintf("%s timed out after %s", tool.Name, fmtSeconds(c.cfg.CallTimeout))
		if srv.ep.done() { // it stopped reading its input: stopped, replaced by the next call
			c.mu.Lock()
			c.recordEndLocked(srv, true)
			c.mu.Unlock()
			msg += ". " + c.exitMessage(srv)
		}
		return ErrorResult(c.cfg.Name, tool.Name, msg), nil
	case errors.As(err, new(*NeedsLoginError)):
		return ErrorResult(c.cfg.Name, tool.Name, err.Error()), nil
	case ctx.Err() != nil:
		if srv.ep.done() { // cut short in the middle of a message: the next call is told
			c.mu.Lock()
			c.recordEndLocked(srv, false)
			c.mu.Unlock()
		}
		return Result{}, context.Cause(ctx)
	}
	// A transport failure: the process died, or is about to; the HTTP
	// connection failed.
	if srv.ep.waitExit(exitNoticeWindow) {
		c.mu.Lock()
		c.recordEndLocked(srv, true)
		c.mu.Unlock()
		return ErrorResult(c.cfg.Name, tool.Name, c.exitMessage(srv)), nil
	}
	return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %v", tool.Name, err))), nil
}

// vanished reports whether the catalogue, refreshed since tool was
// offered, no longer has it.
func (c *connection) vanished(tool Tool) bool {
	cat, ok := c.deps.cache.peek(c.cfg)
	if !ok {
		return false
	}
	for _, t := range cat.Tools {
		if t.MCPName == tool.MCPName {
			return false
		}
	}
	return true
}

// killedOOM reports whether srv's end was recorded as the OOM killer's.
func (c *connection) killedOOM(srv *liveServer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exit != nil && c.exit.srv == srv && c.exit.oom
}

// exitMessage is the error a call gets when its process died.
// How it ended is the end's record (the stop that follows a transport
// failure is not the cause), or how it looks now when none was made.
func (c *connection) exitMessage(srv *liveServer) string {
	c.mu.Lock()
	stopped := c.stopping[srv]
	var e ending
	if c.exit != nil && c.exit.srv == srv {
		e = c.exit.ending
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

// acquire returns a live server, starting one if needed, and counts the
// caller in flight. A process that ended on its own since the last call is
// reported once (errEnded) before a new one starts.
func (c *connection) acquire(ctx context.Context) (srv *liveServer, err error) {
	return c.acquireFor(ctx, false)
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
		if srv, err := c.acquireFor(context.Background(), true); err == nil {
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

// acquireFor is acquire, or with prewarm the start of prewarm.
func (c *connection) acquireFor(ctx context.Context, prewarm bool) (srv *liveServer, err error) {
	c.busy.Add(1)
	defer func() {
		if err != nil {
			c.busy.Add(-1)
		}
	}()
	c.mu.Lock()
	switch {
	case c.state == StateClosed:
		c.mu.Unlock()
		return nil, ErrClosed
	case c.state == StateDisabled:
		c.mu.Unlock()
		return nil, fmt.Errorf("MCP server %s is disabled", c.cfg.Name)
	case c.srv != nil && !c.srv.ep.done():
		c.inflight++ // fast path: no gate, no start
		c.stopIdleLocked()
		srv := c.srv
		c.mu.Unlock()
		return srv, nil
	}
	c.mu.Unlock()

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
		c.inflight++
		c.stopIdleLocked()
		srv := c.srv
		c.mu.Unlock()
		return srv, nil
	}
	if dead := c.srv; dead != nil {
		if prewarm {
			c.mu.Unlock()
			return nil, errNoPrewarm // the next call reports the end
		}
		// It ended since the last call. Its clean-up goes on in the
		// background; this call reports the end, the next starts anew.
		// One the bot replaced (a shared process that stopped
		// answering) is no crash of the chat's: this call runs on a new
		// one, and says what was lost.
		c.recordEndLocked(dead, false)
		c.srv = nil
		if why := replacedReason(dead); why != "" && !c.exit.reported {
			c.exit.reported = true
			c.lost = c.lostNote(fmt.Sprintf("the %s MCP server %s since this chat's last call and was replaced", c.cfg.Name, why))
		}
		if !c.exit.reported {
			c.exit.reported = true
			c.mu.Unlock()
			return nil, &errEnded{c.exitMessage(dead)}
		}
	}
	var s *slot
	if lim := c.deps.limiters[c.cfg.Name]; lim != nil && prewarm {
		var ok bool
		if s, ok = lim.tryTake(c); !ok {
			c.mu.Unlock()
			return nil, errNoPrewarm
		}
	} else if lim != nil {
		// A slot under the ceiling first; a stop or close of this
		// connection ends the wait.
		waitCtx, cancelWait := context.WithCancel(ctx)
		c.state, c.startCancel = StateWaiting, cancelWait
		c.mu.Unlock()
		waitStart := time.Now()
		s, err = lim.take(waitCtx, c, c.queued)
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
	}
	c.state = StateStarting
	startCtx, cancel := context.WithTimeout(context.Background(), c.cfg.StartupTimeout)
	c.startCancel = cancel
	c.mu.Unlock()

	srv, err = c.start(ctx, startCtx)
	if err == nil && prewarm && c.cfg.WarmCall != nil {
		c.warm(startCtx, srv)
	}
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.startCancel = nil
	if srv != nil {
		srv.slot = s
	} else {
		c.releaseSlot(s)
	}
	if c.state == StateClosed { // closed while starting
		if live := srv; live != nil { // not srv: the return below sets it
			c.wg.Go(func() { c.end(live) })
		}
		return nil, ErrClosed
	}
	if err != nil {
		if ctx.Err() != nil {
			c.state = StateNotStarted
			return nil, context.Cause(ctx)
		}
		c.state = StateFailed
		c.deps.observer.StartFailed(c.cfg.Name)
		c.lastErr = capMessage(c.redact(err.Error()), MaxErrorBytes)
		c.deps.sp.logger.Warn("MCP server failed to start", "server", c.cfg.Name, "workspace", c.workspace, "err", c.lastErr)
		return nil, errors.New(c.lastErr)
	}
	c.srv = srv
	c.state = StateRunning
	if c.lost != "" {
		note := c.lost
		srv.note.Store(&note)
		c.lost = ""
	}
	c.deps.observer.ProcessStarted(c.cfg.Name)
	c.info = srv.rpc.info
	c.pid = srv.ep.processID()
	c.starts++
	c.inflight++
	return srv, nil
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

// release ends a call: the idle timer starts when nothing is in flight, and
// the ceiling's first waiter may take this process's slot.
func (c *connection) release(srv *liveServer) { c.releaseAs(srv, true) }

// releaseAs is release; called says a call ran (a prewarm's did not).
func (c *connection) releaseAs(srv *liveServer, called bool) {
	c.lastUsed.Store(time.Now().UnixNano())
	c.usedInTurn()
	if c.busy.Add(-1) == 0 {
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
		c.idleGen++
		c.idleArmed = c.idleGen
		if c.idle == nil {
			c.idle = time.AfterFunc(c.cfg.IdleTimeout, c.idleStop)
		} else {
			c.idle.Reset(c.cfg.IdleTimeout)
		}
	}
}

// stateDirtyLocked notes that a call changed what the chat's state may
// hold; once its calls pause it is saved, at most every stateSaveEvery
// (the save waits for the rest of it), so that a crash (the OOM killer,
// a SIGKILL of the bot) loses little.
func (c *connection) stateDirtyLocked(srv *liveServer) {
	c.stateDirty = true
	if c.inflight > 0 || c.saveTimer != nil {
		return
	}
	wait := stateSaveEvery - time.Since(c.savedAt)
	if wait <= 0 {
		c.saveDueLocked(srv)
		return
	}
	c.saveTimer = time.AfterFunc(wait, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.saveTimer = nil
		if c.srv == srv && c.inflight == 0 && c.stateDirty {
			c.saveDueLocked(srv)
		}
	})
}

// saveDueLocked saves the chat's state in the background.
func (c *connection) saveDueLocked(srv *liveServer) {
	c.stateDirty, c.savedAt = false, time.Now()
	c.goLocked(func() { c.saveStateIfIdle(srv) })
}

// stopIdleLocked disarms the idle timer: a stop already on its way sees
// the generation change and does nothing.
func (c *connection) stopIdleLocked() {
	c.idleGen++
	if c.idle != nil {
		c.idle.Stop()
	}
}

// idleStop stops the process if no call has come since the timer was set.
func (c *connection) idleStop() {
	c.gate <- struct{}{}
	defer func() { <-c.gate }()
	c.mu.Lock()
	if c.idleArmed != c.idleGen || c.inflight > 0 || c.srv == nil || c.state == StateClosed {
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
	if c.inflight > 0 || c.busy.Load() > 0 || c.srv == nil || c.state == StateClosed || !c.heldUntil(c.deps.holdClock()).IsZero() {
		c.mu.Unlock()
		return false
	}
	srv := c.srv
	c.detachLocked(srv, StateNotStarted)
	c.evictions++
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

// queued tells the chat once that its call waits for a free slot.
func (c *connection) queued(ahead int) {
	if f := c.session.queueNotice.Load(); f != nil {
		(*f)(c.cfg.Name, ahead)
	}
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

// recordEndLocked records that srv's endpoint ended on its own (its exit
// watcher, a call that saw it and the next acquire all may; the first
// records it): the state and reason /mcp shows, and the tail kept after the
// next start. reported says the caller tells a call. c.mu must be held.
func (c *connection) recordEndLocked(srv *liveServer, reported bool) {
	if c.exit == nil || c.exit.srv != srv {
		e := srv.ep.ending()
		c.exit = &exitRecord{srv: srv, ending: e, reason: c.redact(e.reason)}
		if c.killedForMemory(srv) {
			c.exit.oom = true
			c.exit.reason += ": killed by the kernel, out of memory"
		}
		if c.srv == srv {
			c.state, c.lastErr = stateOf(e.kind), c.exit.reason
		}
		// A server whose transport failed still runs: stop it now rather
		// than at the next call (and free its slot once it is gone).
		c.goLocked(func() { c.end(srv) })
	}
	c.exit.reported = c.exit.reported || reported
}

// goLocked runs f on the connection's WaitGroup, unless the connection is
// closed (close is then waiting for it, and shutdown stops what runs).
// c.mu must be held.
func (c *connection) goLocked(f func()) {
	if c.state != StateClosed {
		c.wg.Go(f)
	}
}

// detachLocked takes srv off the connection before it is stopped on purpose.
func (c *connection) detachLocked(srv *liveServer, next State) {
	c.stopping[srv] = true
	c.tail = srv.ep.tailLines()
	c.srv = nil
	c.state = next
	c.stopIdleLocked()
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
		c.stopIdleLocked()
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

func (c *connection) redact(s string) string { return c.deps.sp.redactor.Redact(s) }

// memory is the live process's tree memory, and whether one runs.
func (c *connection) memory() (int64, bool) {
	c.mu.Lock()
	srv := c.srv
	running := c.state == StateRunning
	c.mu.Unlock()
	if srv == nil || !running {
		return 0, false
	}
	return srv.ep.memory(), true
}

// ConnStatus is a snapshot of a connection for /mcp.
type ConnStatus struct {
	Server   string
	State    State
	PID      int
	Starts   int
	Info     ServerInfo
	LastErr  string
	Tail     []string // the stderr tail of the live process, or of the last one stopped
	InFlight int
	// LastExit and ExitTail are the last process that ended on its own
	// ("exited (3)") and its stderr tail, kept after the next start.
	LastExit string
	ExitTail []string
	// Evictions counts the processes stopped to free a slot for another
	// chat.
	Evictions int
}

func (c *connection) status() ConnStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ConnStatus{Server: c.cfg.Name, State: c.state, Starts: c.starts, Info: c.info,
		LastErr: c.lastErr, InFlight: c.inflight, Tail: c.tail, Evictions: c.evictions}
	if c.srv != nil && c.state == StateRunning && c.srv.ep.done() && isShared(c.srv) {
		// The shared process it is on ended (it exited, or was replaced
		// for not answering): not running, though no call has seen it.
		e := c.srv.ep.ending()
		st.State, st.LastErr = stateOf(e.kind), c.redact(e.reason)
	}
	if c.srv != nil && !(c.exit != nil && c.exit.srv == c.srv) {
		st.Tail = c.srv.ep.tailLines()
		if c.state == StateRunning {
			st.PID = c.pid
		}
	}
	if c.exit != nil {
		st.LastExit, st.ExitTail = c.exit.reason, c.exit.srv.ep.tailLines()
		if c.exit.srv == c.srv || c.srv == nil {
			st.Tail = nil // the same lines: shown once, as the exit's
		}
	}
	return st
}
