package mcpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// stderrTailLines is how many stderr lines a process keeps for error
// messages and /mcp <name>.
const stderrTailLines = 20

// killGrace is how long a process group gets between SIGTERM and SIGKILL.
const killGrace = 1500 * time.Millisecond

// process is one running server: the child in its own process group, the
// transport on its pipes, and the stderr reader.
//
// The exit watcher reaps the child with Process.Wait as soon as it exits (no
// zombie is left waiting for the next call); the pipes stay open, so the
// transport still reads every line the server wrote before it died.
type process struct {
	name   string
	cmd    *exec.Cmd
	tr     *stdioTransport
	pid    int
	tail   *lineTail
	exited chan struct{} // closed when the leader has exited and been reaped
	// stderrDone is closed when stderr reached EOF: the tail is complete.
	stderrDone chan struct{}

	exitErr   error            // set before exited is closed
	exitState *os.ProcessState // set before exited is closed

	closeOnce sync.Once
}

// spawnOptions is what startProcess needs besides the expanded command.
type spawnOptions struct {
	name        string
	logger      *slog.Logger
	stderrLevel slog.Level
	redactor    Redactor
	onExit      func(*process) // called once from the exit watcher
	owner       string         // OwnerEnv's value; empty: no mark
}

// startProcess starts sp in its own process group, dying with the bot, with
// a transport on its stdin and stdout.
//
// The pipes are made here, not by exec: exec would start copying
// goroutines for non-file writers and close the pipes in Wait, and the
// transport needs the stdout *os.File itself (for read deadlines). Nothing
// calls cmd.Wait; the exit watcher reaps the child with Process.Wait.
func startProcess(sp mcpconfig.Spawn, o spawnOptions) (*process, error) {
	p := &process{
		name:       o.name,
		tail:       newLineTail(stderrTailLines),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	var files []*os.File // closed on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (*process, error) {
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

	cmd := exec.Command(sp.Command, sp.Args...)
	cmd.Env = sp.Env // the full, filtered environment, nothing inherited
	if o.owner != "" {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], OwnerEnv+"="+o.owner)
	}
	cmd.Dir = sp.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("%s: start %s: %w", o.name, sp.Command, err))
	}
	// The child has its copies.
	inR.Close()
	outW.Close()
	errW.Close()
	p.cmd = cmd
	p.pid = cmd.Process.Pid
	p.tr = newStdioTransport(inW, outR, o.logger.With("server", o.name))

	go p.readStderr(errR, o)
	go p.watch(o.onExit)
	return p, nil
}

// readStderr forwards each stderr line, redacted, to the log at the server's
// stderr level with the prefix "<name> mcp: ", and keeps the tail.
func (p *process) readStderr(r io.ReadCloser, o spawnOptions) {
	defer close(p.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	ctx := context.Background()
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if o.redactor != nil {
			line = o.redactor.Redact(line)
		}
		p.tail.add(line)
		o.logger.Log(ctx, o.stderrLevel, o.name+" mcp: "+line, "server", o.name, "pid", p.pid)
	}
}

// watch reaps the leader when it exits, kills what is left of its process
// group (orphans of a crashed server), and reports the exit.
func (p *process) watch(onExit func(*process)) {
	state, err := p.cmd.Process.Wait()
	p.exitState, p.exitErr = state, err
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	close(p.exited)
	if onExit != nil {
		onExit(p)
	}
}

// waitExit waits up to d for the leader to exit and, after that, briefly for
// the rest of its stderr, so an exit message carries the whole tail. It
// reports whether the leader exited.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return false
	}
	select {
	case <-p.stderrDone:
	case <-time.After(500 * time.Millisecond):
	}
	return true
}

// done reports whether the leader has exited.
func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitDescription is "1", "signal: killed" and the like, for messages.
// Valid only after exited is closed.
func (p *process) exitDescription() string {
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

// terminate kills the whole process tree: SIGTERM to the group and to the
// groups of its descendants (a browser may run in a group of its own), a
// grace of at most killGrace, then SIGKILL, and waits for the leader to be
// reaped. It then closes the transport. Safe to call more than once.
func (p *process) terminate() {
	groups := descendantGroups(p.pid)
	signalGroups(groups, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(killGrace):
	}
	// Members of the group may outlive the leader (or ignore SIGTERM).
	signalGroups(groups, syscall.SIGKILL)
	<-p.exited
	p.closeTransport()
}

func (p *process) ending() (State, string) {
	return StateExited, "exited (" + p.exitDescription() + ")"
}

func (p *process) endMessage(server string) string {
	tail := strings.Join(p.tail.snapshot(), "\n")
	if tail == "" {
		tail = "no stderr output"
	}
	return fmt.Sprintf("%s MCP server exited (%s): %s. It restarts on the next call; browser state was lost.",
		server, p.exitDescription(), tail)
}

// tailLines is the end of the process's stderr.
func (p *process) tailLines() []string { return p.tail.snapshot() }

// processID is the child's pid.
func (p *process) processID() int { return p.pid }

// closeTransport releases the pipes.
func (p *process) closeTransport() {
	p.closeOnce.Do(func() { _ = p.tr.Close() })
}

func signalGroups(groups []int, sig syscall.Signal) {
	for _, g := range groups {
		_ = syscall.Kill(-g, sig)
	}
}

// descendantGroups returns the process group of pid and the groups of all
// its live descendants, read from /proc. pid leads its own group.
func descendantGroups(pid int) []int {
	groups := []int{pid}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return groups
	}
	type stat struct{ ppid, pgid int }
	stats := make(map[int]stat, len(entries))
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, pgid, ok := readStat(id)
		if ok {
			stats[id] = stat{ppid, pgid}
		}
	}
	children := make(map[int][]int, len(stats))
	for id, s := range stats {
		children[s.ppid] = append(children[s.ppid], id)
	}
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range children[cur] {
			queue = append(queue, c)
			if g := stats[c].pgid; !seen[g] && g > 1 {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// readStat parses ppid and pgid from /proc/<pid>/stat.
func readStat(pid int) (ppid, pgid int, ok bool) {
	ppid, pgid, _, ok = readStatState(pid)
	return ppid, pgid, ok
}

// readStatState parses ppid, pgid and the state letter ('Z' for a zombie)
// from /proc/<pid>/stat.
func readStatState(pid int) (ppid, pgid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name is in parentheses and may contain spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return ppid, pgid, f[0][0], err1 == nil && err2 == nil
}

// lineTail keeps the last n lines.
type lineTail struct {
	mu    sync.Mutex
	lines []string
	n     int
}

func newLineTail(n int) *lineTail { return &lineTail{n: n} }

func (t *lineTail) add(line string) {
	t.mu.Lock()
	if len(t.lines) == t.n {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:t.n-1]
	}
	t.lines = append(t.lines, line)
	t.mu.Unlock()
}

func (t *lineTail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}
