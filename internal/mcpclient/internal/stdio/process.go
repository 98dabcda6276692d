package stdio

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is how long a server's processes get between SIGTERM and
// SIGKILL: long enough for a browser to shut down cleanly (Chromium removes
// the lock of its profile only then; a profile left locked by a killed
// browser refuses the next one).
const DefaultGrace = 3 * time.Second

// Command is what to run: the resolved program, its arguments (argv[1:]),
// the working directory and the complete environment.
type Command struct {
	Path string
	Args []string
	Dir  string
	Env  []string
}

// Options configure a process. The zero value works: no logging, no mark.
type Options struct {
	// Name is the server's name, for log lines and messages.
	Name   string
	Logger *slog.Logger
	// StderrLevel is the level stderr lines are logged at; a JSON line
	// with a level field is logged at its own level.
	StderrLevel slog.Level
	// Redact scrubs known secrets from stderr lines before they are logged
	// or kept.
	Redact func(string) string
	// OnExit is called once, from the exit watcher, when the leader
	// exits (on purpose or not).
	OnExit func()
	// Mark is the owner mark every process of the server carries in its
	// environment (see MarkEnv); empty: none. With a Tracker, the number of
	// the server's instance is added to it.
	Mark string
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace when 0).
	Grace time.Duration
	// MaxMessageBytes is the largest message the server may write
	// (DefaultMaxMessageBytes when 0): a longer one ends the transport.
	MaxMessageBytes int
	// Tracker follows the server's whole process tree (see TrackMode); nil:
	// its process groups only.
	Tracker *Tracker
}

// Process is one running server: the child in a session (and group) of
// its own, the transport on its pipes, and the stderr reader. Its
// goroutines (the exit watcher, the stderr reader) end by the time
// Terminate returns.
//
// The exit watcher reaps the child as soon as it exits (no zombie waits for
// the next call); the pipes stay open, so the transport still reads every
// line the server wrote before it died.
type Process struct {
	name   string
	cmd    *exec.Cmd
	tr     *Transport
	tree   tree // the server's processes, ended by Terminate
	pid    int
	grace  time.Duration
	tail   *lineTail
	stderr *os.File // the read end, closed by Terminate if a straggler keeps it open

	exited      chan struct{} // closed when the leader has exited and been reaped
	stderrDone  chan struct{} // closed when stderr reached EOF: the tail is complete
	watcherDone chan struct{} // closed when the exit watcher is done (orphans ended)
	terminating atomic.Bool   // Terminate runs: the watcher leaves the group to it

	exitState *os.ProcessState // set before exited is closed
	exitErr   error            // set before exited is closed

	closeOnce sync.Once
	termOnce  sync.Once
}

// Start starts cmd in a session of its own, dying with the bot, with a
// transport on its stdin and stdout.
//
// The pipes are made here, not by exec: exec would start copying
// goroutines for non-file writers and close the pipes in Wait, and the
// transport needs the stdout *os.File itself (for read deadlines). Nothing
// calls cmd.Wait; the exit watcher reaps the child with Process.Wait.
func Start(c Command, o Options) (*Process, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	p := &Process{
		name:        o.Name,
		grace:       o.Grace,
		tail:        newLineTail(TailLines),
		exited:      make(chan struct{}),
		stderrDone:  make(chan struct{}),
		watcherDone: make(chan struct{}),
	}
	var files []*os.File // closed on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (*Process, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdin pipe: %w", err))
	}
	outR, outW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdout pipe: %w", err))
	}
	errR, errW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stderr pipe: %w", err))
	}

	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = c.Env // the full, filtered environment, nothing inherited; the tracker adds the mark
	cmd.Dir = c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	cmd, tr, err := o.Tracker.start(cmd, o.Mark)
	if err != nil {
		return fail(fmt.Errorf("%s: start %s: %w", o.Name, c.Path, err))
	}
	p.tree = tr
	if err := raiseOOMScore(cmd.Process.Pid); err != nil {
		o.Logger.Debug("MCP server's oom_score_adj not raised", "server", o.Name, "err", err)
	}
	// The child has its copies.
	inR.Close()
	outW.Close()
	errW.Close()
	p.cmd = cmd
	p.pid = cmd.Process.Pid
	p.stderr = errR
	p.tr = newTransport(inW, outR, o.Logger.With("server", o.Name), o.Redact, o.MaxMessageBytes)

	go p.readStderr(errR, o)
	go p.watch(o.OnExit)
	return p, nil
}

// Transport is the JSON-RPC transport on the process's stdin and stdout.
func (p *Process) Transport() *Transport { return p.tr }

// PID is the leader's pid.
func (p *Process) PID() int { return p.pid }

// readStderr keeps the tail of stderr and logs each line, redacted, with
// the prefix "<name> mcp: ", at the server's stderr level (a JSON line at
// its own level). A line longer than MaxLineBytes is cut there: the rest of
// it is dropped, and reading goes on.
func (p *Process) readStderr(r io.Reader, o Options) {
	defer close(p.stderrDone)
	lines := newLineReader(r, MaxLineBytes)
	ctx := context.Background()
	limit := newLogLimiter()
	dropped := func() {
		if n := limit.takeDropped(); n > 0 {
			o.Logger.Warn(fmt.Sprintf("%s mcp: %d stderr lines not logged (over %d lines a second)", o.Name, n, logRate),
				"server", o.Name, "pid", p.pid)
		}
	}
	defer dropped()
	for {
		line, cut, err := lines.next()
		if err != nil {
			return
		}
		line = o.Redact(strings.TrimRight(line, "\r"))
		if cut {
			line += " […]"
		}
		p.tail.add(line)
		level := lineLevel(line, o.StderrLevel)
		if !o.Logger.Enabled(ctx, level) {
			continue
		}
		if !limit.allow(time.Now()) {
			continue
		}
		dropped()
		o.Logger.Log(ctx, level, o.Name+" mcp: "+line, "server", o.Name, "pid", p.pid)
	}
}

// watch reaps the leader when it exits and reports it. When the leader
// exits on its own (a crash), what is left of its tree is ended the way
// Terminate ends it (see stop).
func (p *Process) watch(onExit func()) {
	defer close(p.watcherDone)
	state, err := p.cmd.Process.Wait()
	p.exitState, p.exitErr = state, err
	close(p.exited)
	if onExit != nil {
		// What the server wrote last before it died (its reason) may still
		// be in the pipe: the report waits briefly for the rest of stderr,
		// so that the exit's record carries the whole tail.
		t := time.NewTimer(stderrAfterExit)
		select {
		case <-p.stderrDone:
		case <-t.C:
		}
		t.Stop()
		onExit()
	}
	if !p.terminating.Load() {
		p.tree.snapshot()
		p.stop()
		p.tree.release()
	}
}

// stop ends the server's tree, the leader asked first: SIGTERM to its own
// process group, and up to the grace for the group to exit — the server
// shutting down what it started (a browser server closes its browser
// properly, and the browser unlocks its profile; a browser sent SIGTERM
// itself dies with the profile locked). A process that ignores SIGTERM is
// not waited for: it will not end on it. The grace is the server's: what
// it leaves behind, in its group or elsewhere (a daemon, a descendant that
// called setsid() or left the server's cgroup), is ended at once after
// it — SIGTERM to every process of the tree, in every group (a browser runs
// in a group of its own), a second for those that act on it, and SIGKILL.
// What the tree is depends on the Tracker's mode (see TrackMode).
func (p *Process) stop() {
	signalGroups([]int{p.pid}, syscall.SIGTERM)
	waitGone(func() bool { return groupsPending([]int{p.pid}) }, p.grace)
	if !p.tree.alive() {
		return
	}
	p.tree.signal(syscall.SIGTERM)
	waitGone(p.tree.pending, leftoverGrace)
	if p.tree.alive() {
		p.tree.kill()
		waitGone(p.tree.alive, killWait)
	}
}

// leftoverGrace is what the processes a server left behind get between
// SIGTERM and SIGKILL.
const leftoverGrace = time.Second

// stderrAfterExit bounds the wait for the rest of stderr after the leader
// exited (a process that outlives it may hold the pipe open).
const stderrAfterExit = 500 * time.Millisecond

// Exited is closed when the leader has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done reports whether the leader has exited.
func (p *Process) Done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitExit waits up to d for the leader to exit and, after that, briefly
// for the rest of its stderr, so an exit message carries the whole tail.
// It reports whether the leader exited.
func (p *Process) WaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return false
	}
	t.Reset(stderrAfterExit)
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	return true
}

// ExitDescription is "1", "signal: killed" and the like, for messages.
// Valid once the leader has exited.
func (p *Process) ExitDescription() string {
	if p.exitState == nil {
		if p.exitErr != nil {
			return p.exitErr.Error()
		}
		return "unknown"
	}
	if ws, ok := p.exitState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return strconv.Itoa(p.exitState.ExitCode())
}

// Tail is the end of the process's stderr.
func (p *Process) Tail() []string { return p.tail.snapshot() }

// CloseTransport releases the pipes of the transport.
func (p *Process) CloseTransport() {
	p.closeOnce.Do(func() { _ = p.tr.Close() })
}

// Terminate ends the whole process tree gracefully (see stop: the server
// gets the grace to shut down, what it leaves behind does not) and returns
// when the leader is reaped, the transport closed and the process's
// goroutines have ended. Safe to call more than once, and concurrently.
func (p *Process) Terminate() {
	p.termOnce.Do(func() {
		p.terminating.Store(true)
		p.tree.snapshot() // before the leader exits: then its children are orphans
		p.stop()
		<-p.exited
		<-p.watcherDone
		p.CloseTransport()
		// Stderr ends when the last holder of the pipe is gone; a process
		// that left the tree (a daemon) may keep it open.
		t := time.NewTimer(time.Second)
		select {
		case <-p.stderrDone:
		case <-t.C:
			_ = p.stderr.Close()
			<-p.stderrDone
		}
		t.Stop()
		p.tree.release()
	})
	<-p.stderrDone
}

// killWait bounds the wait for killed processes to exit (one in
// uninterruptible sleep takes its time).
const killWait = 5 * time.Second

func signalGroups(groups []int, sig syscall.Signal) {
	for _, g := range groups {
		_ = syscall.Kill(-g, sig)
	}
}
