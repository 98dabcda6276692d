package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

func newConnection(cfg mcpconfig.ServerConfig, workspace, private string, deps *Client, session *Session) *connection {
	c := &connection{cfg: cfg, workspace: workspace, private: private, deps: deps, session: session, gate: make(chan struct{}, 1),
		stopping: map[*liveServer]bool{}}
	if !cfg.Enabled {
		c.state = StateDisabled
	}
	return c
}

// goLocked runs f on the connection's WaitGroup, unless the connection is
// closed (close is then waiting for it, and shutdown stops what runs).
// c.mu must be held.
func (c *connection) goLocked(f func()) {
	if c.state != StateClosed {
		c.wg.Go(f)
	}
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
