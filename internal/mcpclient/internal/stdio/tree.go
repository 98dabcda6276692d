package stdio

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// TrackMode is how a Tracker follows the process tree of each server: what
// Terminate, the exit watcher and the Tracker's Close end besides the
// server's own process group.
type TrackMode int

const (
	// TrackAuto, as Open's argument, picks TrackCgroup when the bot may
	// create cgroups, else TrackSubreaper (else TrackGroups).
	TrackAuto TrackMode = iota
	// TrackGroups follows process groups: the server's own, and those of
	// its descendants while the server runs. A descendant that leaves them
	// (a double-forked daemon, a setsid() on SIGTERM) escapes. The mode of
	// a Tracker that is not open, and of systems other than Linux.
	TrackGroups
	// TrackSubreaper makes the bot a child subreaper: orphaned descendants
	// of its servers are reparented to the bot instead of init. It ends a
	// server's processes by session and group (every server leads a session
	// of its own, which no process can join), by the pids seen in its tree,
	// by the server's own mark in their environment and by the descendants
	// of all those; an adopted process nothing ties to a server is ended
	// once every server that ran when it started has stopped. It reaps the
	// processes it adopts, and keeps a record of the trees in the state
	// directory given to Open for the next start (ReapOrphans).
	TrackSubreaper
	// TrackCgroup starts each server in a cgroup v2 of its own, under one
	// of the bot's (a child of the bot's own cgroup), and ends what is in
	// it and below it: nothing the server starts can leave it without
	// privileges. Where a process may (root may move itself to any
	// cgroup), the subreaper's net catches it: the bot is a child
	// subreaper in this mode too, and what leaves the cgroup and is
	// orphaned comes back to it and ends with its server as in
	// TrackSubreaper (with the record of the trees, for the next start).
	TrackCgroup
)

func (m TrackMode) String() string {
	switch m {
	case TrackAuto:
		return "auto"
	case TrackGroups:
		return "process groups"
	case TrackSubreaper:
		return "subreaper"
	case TrackCgroup:
		return "cgroup"
	}
	return fmt.Sprintf("TrackMode(%d)", int(m))
}

// TrackerOptions configure a Tracker.
type TrackerOptions struct {
	// Owner is the owner of the marks (see Mark): it names the bot's
	// cgroup and its record, so that ReapOrphans finds those of an earlier
	// run of the same owner.
	Owner  string
	Logger *slog.Logger
	// ScanInterval is how often the subreaper mode looks at the trees
	// between starts and stops, to note what left them (for the record)
	// and end the adopted processes no server can own any more (10 s
	// when 0).
	ScanInterval time.Duration
}

// Tracker follows the process trees of the servers a bot process starts,
// so that what a server started ends with it even when it left the
// server's process group. One per bot process: Open sets it up (a cgroup
// of the bot's, or the bot as a child subreaper), Start registers each
// server with it, and Close ends whatever is left of every tree. NewTracker
// does no I/O; the first Start opens a Tracker that was not opened, in
// TrackAuto mode without a record.
//
// In the subreaper mode the process must start every child in a session
// of its own through Start with the Tracker: it takes the others for
// adopted processes (children it starts in its own session, os/exec's
// default, are left alone).
type Tracker struct {
	o        TrackerOptions
	logger   *slog.Logger
	stateDir string // where the record is kept and read; empty: none

	// launch is held while a server is started and registered, and while
	// adopted zombies are reaped: the reaper never sees a server's leader
	// before it is registered.
	launch sync.Mutex

	mu     sync.Mutex
	mode   TrackMode
	opened bool
	closed bool
	next   int // the last instance number given

	sys trackerSys // the mode's state (tree_linux.go)
}

// NewTracker returns a Tracker in TrackGroups mode until Open.
func NewTracker(o TrackerOptions) *Tracker {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ScanInterval <= 0 {
		o.ScanInterval = 10 * time.Second
	}
	return &Tracker{o: o, logger: o.Logger, mode: TrackGroups}
}

// Mode is the mode Open chose (TrackGroups before Open).
func (t *Tracker) Mode() TrackMode {
	if t == nil {
		return TrackGroups
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// Open sets the tracker up in mode want: TrackAuto chooses the best the
// system allows, falling back to TrackGroups (and logging why); a mode
// named explicitly that is not available is an error. In the subreaper
// mode the record of the trees is kept in stateDir (empty: none), and
// ReapOrphans reads the records of earlier runs there. It returns the mode
// chosen. Call it once, before the first Start.
func (t *Tracker) Open(want TrackMode, stateDir string) (TrackMode, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.openLocked(want, stateDir)
}

func (t *Tracker) openLocked(want TrackMode, stateDir string) (TrackMode, error) {
	if t.closed || t.opened {
		return t.mode, errors.New("tracker already opened")
	}
	t.stateDir = stateDir
	mode, err := t.openSys(want)
	if err != nil {
		return TrackGroups, err
	}
	t.mode, t.opened = mode, true
	return mode, nil
}

// ensureOpen opens a Tracker that was not opened, in TrackAuto mode.
func (t *Tracker) ensureOpen() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opened || t.closed {
		return
	}
	if _, err := t.openLocked(TrackAuto, ""); err != nil {
		t.logger.Warn("MCP servers are tracked by process group only", "err", err)
		t.opened = true
	}
}

// Close ends every process left in the trees of the servers started with
// the tracker (call it after terminating them), stops the tracker's
// goroutine and removes its cgroups and record. Safe to call more than
// once; a Tracker that was never opened has nothing to do.
func (t *Tracker) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	t.closeSys()
}

// start starts cmd as a server of t (nil: no tracker) with the owner mark
// (empty: none), and returns the command started (cmd, or a copy of it
// where a first way to start it failed) and its tree.
func (t *Tracker) start(cmd *exec.Cmd, mark string) (*exec.Cmd, tree, error) {
	if t != nil {
		t.ensureOpen()
	}
	if t.Mode() == TrackGroups {
		addMark(cmd, mark)
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return cmd, newGroupTree(cmd.Process.Pid), nil
	}
	return t.startSys(cmd, mark)
}

// addMark adds the mark to cmd's environment (empty: none).
func addMark(cmd *exec.Cmd, mark string) {
	if mark != "" {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], MarkEnv+"="+mark)
	}
}

// tree is what Terminate and the exit watcher end: the server's processes.
// Its methods are safe to call concurrently.
type tree interface {
	// snapshot notes the processes of the tree; called before the first
	// signal, while the leader may still run (its children are then still
	// its children).
	snapshot()
	// alive reports whether a process of the tree still runs (zombies do
	// not count).
	alive() bool
	// pending reports whether a process of the tree still runs that does
	// not ignore SIGTERM: one that may still end on it.
	pending() bool
	// signal sends sig to every process of the tree.
	signal(sig syscall.Signal)
	// kill ends every process of the tree for good.
	kill()
	// release forgets the tree once it ended and the leader was reaped
	// (its cgroup is removed).
	release()
}

// groupTree is the process group of the leader and, from the snapshot
// taken while the leader runs, the groups of its descendants.
type groupTree struct {
	leader int
	mu     sync.Mutex
	groups []int
}

func newGroupTree(leader int) *groupTree { return &groupTree{leader: leader, groups: []int{leader}} }

func (g *groupTree) snapshot() {
	groups := descendantGroups(g.leader)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range groups {
		if !slices.Contains(g.groups, n) {
			g.groups = append(g.groups, n)
		}
	}
}

func (g *groupTree) list() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.groups...)
}

func (g *groupTree) alive() bool               { return groupsAlive(g.list()) }
func (g *groupTree) pending() bool             { return groupsPending(g.list()) }
func (g *groupTree) signal(sig syscall.Signal) { signalGroups(g.list(), sig) }
func (g *groupTree) kill()                     { g.signal(syscall.SIGKILL) }
func (g *groupTree) release()                  {}

// waitGone waits up to d for alive to turn false and reports whether it did.
func waitGone(alive func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
