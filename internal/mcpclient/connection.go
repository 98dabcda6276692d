package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// State is a connection's state as /mcp shows it.
type State int

const (
	StateNotStarted State = iota
	StateStarting
	StateRunning
	StateExited // the process ended since the last call; the next call respawns it
	// StateDisconnected: an HTTP server's session failed; the next call
	// opens a new one.
	StateDisconnected
	StateFailed // the last start failed
	StateDisabled
	StateClosed
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
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ErrClosed is returned by calls on a closed connection or session: the
// session is shutting down, and the caller should stop.
var ErrClosed = errors.New("mcp connection closed")

// connection is one server's process for one session: started lazily by the
// first call in the session's workspace, stopped when idle, restarted after a
// crash by the next call.
//
// Two locks: gate (a one-slot channel, so waiting honours the caller's
// context) serialises starting and stopping; mu guards the fields below and
// is never held across I/O. A call takes its process and counts itself in
// flight under mu; the idle stop re-checks the count under the gate and mu,
// so it never kills a process a call has just been handed.
type connection struct {
	cfg       mcpconfig.ServerConfig
	workspace string
	deps      *Client

	gate chan struct{}

	mu          sync.Mutex
	srv         *liveServer
	state       State
	inflight    int
	idle        *time.Timer
	idleGen     int // bumped by every call and stop: a stale timer sees it
	idleArmed   int // idleGen when the timer was last set
	lastErr     string
	tail        []string // stderr tail of the last process that ended
	info        ServerInfo
	pid         int
	starts      int
	startCancel context.CancelFunc
	stopping    map[*liveServer]bool // processes being stopped on purpose
}

func newConnection(cfg mcpconfig.ServerConfig, workspace string, deps *Client) *connection {
	c := &connection{cfg: cfg, workspace: workspace, deps: deps, gate: make(chan struct{}, 1),
		stopping: map[*liveServer]bool{}}
	if !cfg.Enabled {
		c.state = StateDisabled
	}
	return c
}

// call runs one tool call. Failures of the server become error results; only
// the caller's own cancellation (and ErrClosed) is returned as an error.
func (c *connection) call(ctx context.Context, tool Tool, args json.RawMessage) (Result, error) {
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
	raw, err := srv.rpc.callTool(ctx, tool.MCPName, args, deadline)
	if err == nil {
		res, err := mapValidResult(c.cfg.Name, tool.Name, raw)
		if err != nil {
			return ErrorResult(c.cfg.Name, tool.Name, fmt.Sprintf("%s: invalid result: %v", tool.Name, err)), nil
		}
		inlineLinkedFiles(&res, srv.dir, c.workspace)
		return res, nil
	}
	var rpcErr *RPCError
	switch {
	case errors.As(err, &rpcErr):
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %s", tool.Name, rpcErr.Error()))), nil
	case errors.Is(err, errCallTimeout) && ctx.Err() == nil:
		return ErrorResult(c.cfg.Name, tool.Name,
			fmt.Sprintf("%s timed out after %s", tool.Name, fmtSeconds(c.cfg.CallTimeout))), nil
	case ctx.Err() != nil:
		return Result{}, context.Cause(ctx)
	}
	// A transport failure: the process died, or is about to; the HTTP
	// session failed.
	if srv.ep.waitExit(exitNoticeWindow) {
		c.mu.Lock()
		c.recordEndLocked(srv)
		c.mu.Unlock()
		return ErrorResult(c.cfg.Name, tool.Name, c.exitMessage(srv)), nil
	}
	return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s: %v", tool.Name, err))), nil
}

// exitMessage is the error a call gets when its process died.
func (c *connection) exitMessage(srv *liveServer) string {
	c.mu.Lock()
	stopped := c.stopping[srv]
	c.mu.Unlock()
	if stopped {
		return fmt.Sprintf("%s MCP server was stopped during the call. It restarts on the next call.", c.cfg.Name)
	}
	return c.redact(srv.ep.endMessage(c.cfg.Name))
}

// acquire returns a live server, starting one if needed, and counts the
// caller in flight.
func (c *connection) acquire(ctx context.Context) (*liveServer, error) {
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
	dead := c.srv
	c.srv = nil
	c.state = StateStarting
	startCtx, cancel := context.WithTimeout(context.Background(), c.cfg.StartupTimeout)
	c.startCancel = cancel
	c.mu.Unlock()
	if dead != nil {
		dead.ep.closeTransport()
	}

	srv, err := c.start(ctx, startCtx)
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	c.startCancel = nil
	if c.state == StateClosed { // closed while starting
		if srv != nil {
			go srv.ep.terminate()
		}
		return nil, ErrClosed
	}
	if err != nil {
		if ctx.Err() != nil {
			c.state = StateNotStarted
			return nil, context.Cause(ctx)
		}
		c.state = StateFailed
		c.lastErr = c.redact(err.Error())
		return nil, errors.New(c.lastErr)
	}
	c.srv = srv
	c.state = StateRunning
	c.info = srv.rpc.info
	c.pid = srv.ep.processID()
	c.starts++
	c.inflight++
	return srv, nil
}

// start spawns the process in the workspace and negotiates. The start is
// bounded by startCtx (the startup timeout, cancelled by Stop and Close) and
// abandoned when the caller's ctx ends.
func (c *connection) start(ctx, startCtx context.Context) (*liveServer, error) {
	sp, err := c.cfg.Expand(c.workspace, c.deps.env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
	}
	if fi, err := os.Stat(sp.Dir); err != nil || !fi.IsDir() {
		// exec reports a missing directory as a missing command.
		return nil, fmt.Errorf("%s: working directory %s does not exist", c.cfg.Name, sp.Dir)
	}
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		if c.startCancel != nil {
			c.startCancel()
		}
		c.mu.Unlock()
	})
	defer stop()
	srv, err := openSession(startCtx, sp, c.cfg, sessionDeps{
		logger:   c.deps.logger,
		redactor: c.deps.redactor,
		client:   c.deps.client,
		onExit:   c.onExit,
		owner:    c.deps.owner,
	})
	if err != nil {
		return nil, err
	}
	c.deps.logger.Info("MCP server started", "server", c.cfg.Name, "pid", srv.ep.processID(),
		"workspace", c.workspace, "protocol", srv.rpc.info.ProtocolVersion)
	go c.checkCatalog(srv)
	return srv, nil
}

// checkCatalog warns when the live server's tools differ from the cached
// catalogue (a package upgraded in place). Calls go by name either way.
// Without a cached catalogue there is nothing to compare: it never starts a
// discovery of its own, which would compete with the first call.
func (c *connection) checkCatalog(srv *liveServer) {
	cat, ok := c.deps.cache.Peek(c.cfg)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.StartupTimeout)
	defer cancel()
	raws, err := srv.rpc.listTools(ctx)
	if err != nil {
		return
	}
	live, err := decodeTools(c.cfg.Name, raws)
	if err != nil {
		return
	}
	if !sameToolNames(cat.Tools, live) {
		c.deps.logger.Warn("MCP server's live tools differ from the cached catalogue; calls go by name",
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

// release ends a call: the idle timer starts when nothing is in flight.
func (c *connection) release(srv *liveServer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	if srv.ep.done() && c.inflight == 0 && c.srv == srv {
		srv.ep.closeTransport()
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
	if c.idleArmed != c.idleGen || c.inflight > 0 || c.srv == nil {
		c.mu.Unlock()
		return
	}
	srv := c.srv
	c.detachLocked(srv, StateNotStarted)
	c.mu.Unlock()
	c.deps.logger.Info("MCP server stopped after idle timeout", "server", c.cfg.Name, "pid", srv.ep.processID(),
		"idle", c.cfg.IdleTimeout)
	srv.ep.terminate()
	c.forget(srv)
}

// onExit runs in the process's exit watcher.
func (c *connection) onExit(p *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv == nil || c.srv.ep != endpoint(p) {
		return // stopped on purpose, or replaced
	}
	c.recordEndLocked(c.srv)
	if c.inflight == 0 {
		go p.closeTransport()
	}
	c.deps.logger.Warn("MCP server exited", "server", c.cfg.Name, "pid", p.pid, "code", p.exitDescription())
}

// recordEndLocked records that srv's endpoint ended (a process's exit
// watcher and a call that saw it both may): the state and reason /mcp
// shows. c.mu must be held.
func (c *connection) recordEndLocked(srv *liveServer) {
	if c.srv == srv {
		state, reason := srv.ep.ending()
		c.state, c.lastErr = state, c.redact(reason)
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

// stop kills the process (if any) and leaves the connection usable: the next
// call starts a fresh process. A failed state resets to not started; the
// last error stays for /mcp <name>.
func (c *connection) stop() {
	c.shutdown(StateNotStarted)
}

// close stops the process for good. Idempotent.
func (c *connection) close() {
	c.shutdown(StateClosed)
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
	c.mu.Unlock()
	if srv != nil {
		srv.ep.terminate()
		c.forget(srv)
	}
}

func (c *connection) redact(s string) string { return c.deps.redactor.Redact(s) }

// ConnStatus is a snapshot of a connection for /mcp.
type ConnStatus struct {
	Server   string
	State    State
	PID      int
	Starts   int
	Info     ServerInfo
	LastErr  string
	Tail     []string
	InFlight int
}

func (c *connection) status() ConnStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ConnStatus{Server: c.cfg.Name, State: c.state, Starts: c.starts, Info: c.info,
		LastErr: c.lastErr, InFlight: c.inflight, Tail: c.tail}
	if c.srv != nil {
		st.Tail = c.srv.ep.tailLines()
		if c.state == StateRunning {
			st.PID = c.pid
		}
	}
	return st
}

// logger helper for tests and callers without one.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
