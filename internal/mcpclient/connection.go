package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
// It is made of parts, each with its own file:
//   - the lifecycle (acquire.go, stop.go, exit.go): gate (a one-slot
//     channel, so waiting honours the caller's context) serialises starting
//     and stopping; srv, state, startCancel and stopping say what runs;
//   - the call path (call.go, hold.go): inflight and lost under mu, and use,
//     the callers' marks that the ceiling and the disk watcher read without
//     a lock. call.go reaches the lifecycle only through acquire, release
//     and recordEnd: it takes no lock and reads no lifecycle field;
//   - the timers that act when calls pause: idle (idle.go) and saves
//     (statesave.go);
//   - rec, what /mcp shows of its processes (record.go).
//
// mu guards every field below it and is never held across I/O; the lock
// order is gate, then mu. A call takes its process and counts itself in
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
	session   *Session // for the queue notice and the turn's hold

	gate chan struct{}
	wg   sync.WaitGroup
	use  uses // its callers, read without mu

	mu sync.Mutex
	// The lifecycle.
	srv         *liveServer
	state       State
	startCancel context.CancelFunc
	stopping    map[*liveServer]bool // processes being stopped on purpose
	// The call path: inflight counts the calls handed srv; lost is what
	// the next call on a new process says (lostNote): the chat's last one
	// was taken away (another chat's need, a replacement); "" when the chat
	// stopped it itself, or it is still there.
	inflight int
	lost     string
	// What acts when calls pause, and what /mcp shows.
	idle  idleTimer
	saves saveSchedule
	rec   record
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
