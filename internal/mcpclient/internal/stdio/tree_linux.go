package stdio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// trackerSys is a Tracker's state on Linux.
type trackerSys struct {
	self selfInfo
	id   string // this tracker's part of every instance number it gives

	// cgroup mode
	parentDir string // the bot's own cgroup, where the bots' cgroups are
	cgroupDir string // the bot's cgroup for its servers, under parentDir
	noClone3  bool   // clone3 (CLONE_INTO_CGROUP) is refused: move children in after the start
	noPtrace  bool   // tracing is refused too: move them in right after the start, untraced

	// subreaper mode: the servers by leader pid (their zombies are the exit
	// watchers' to reap), the adopted processes no server claims, the
	// reaper goroutine and the record.
	servers    map[int]*server
	strays     map[procKey]bool
	known      map[procKey]bool // every process seen in a tree but a leader, until reaped
	stop, done chan struct{}
	record     string // the record's path; empty: none
	boot       string // the boot id and pid namespace the record names
	pidns      string
	recorded   string // what the record holds
	recordErr  bool   // a failure to write it was logged
}

func (t *Tracker) openSys(want TrackMode) (TrackMode, error) {
	t.sys.self = readSelf()
	var b [4]byte
	_, _ = rand.Read(b[:])
	t.sys.id = hex.EncodeToString(b[:])
	switch want {
	case TrackGroups:
		return TrackGroups, nil
	case TrackCgroup:
		if err := t.openCgroup(); err != nil {
			return 0, fmt.Errorf("cgroup tracking: %w", err)
		}
		return TrackCgroup, nil
	case TrackSubreaper:
		if err := t.openSubreaper(); err != nil {
			return 0, fmt.Errorf("subreaper tracking: %w", err)
		}
		return TrackSubreaper, nil
	case TrackAuto:
		cgErr := t.openCgroup()
		if cgErr == nil {
			return TrackCgroup, nil
		}
		if err := t.openSubreaper(); err != nil {
			t.logger.Warn("MCP servers are tracked by process group only: a descendant that leaves it survives its server",
				"cgroup", cgErr, "subreaper", err)
			return TrackGroups, nil
		}
		t.logger.Debug("no cgroup of the bot's own for MCP servers", "reason", cgErr)
		return TrackSubreaper, nil
	}
	return 0, fmt.Errorf("unknown tracking mode %v", want)
}

// openCgroup makes the bot's cgroup for its servers and, as a net, makes
// the bot a child subreaper too: a process allowed to move itself out of
// its server's cgroup (root may write any cgroup.procs) is no longer in any
// cgroup of the bot's, but once orphaned it comes back to the bot, and the
// subreaper's rules end it with its server (see TrackSubreaper).
func (t *Tracker) openCgroup() error {
	own, err := ownCgroupDir()
	if err != nil {
		return err
	}
	dir := filepath.Join(own, cgroupName(t.o.Owner, t.sys.self.procKey, t.sys.id))
	if err := makeCgroup(dir, own); err != nil {
		return err
	}
	t.sys.parentDir, t.sys.cgroupDir = own, dir
	if err := t.openSubreaper(); err != nil {
		t.logger.Debug("MCP servers tracked by cgroup, without the subreaper's net: a process that leaves its cgroup survives its server",
			"err", err)
	}
	return nil
}

// instance gives the next instance number: this tracker's id and a count.
func (t *Tracker) instance() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	return t.sys.id + "." + strconv.Itoa(t.next)
}

func (t *Tracker) startSys(cmd *exec.Cmd, mark string) (*exec.Cmd, tree, error) {
	inst := t.instance()
	if mark != "" {
		mark += ":" + inst
	}
	addMark(cmd, mark)
	switch t.Mode() {
	case TrackCgroup:
		if t.sys.servers != nil {
			return t.startInCgroupAdopting(cmd, inst, mark)
		}
		cmd, tr, err := t.startInCgroup(cmd, inst)
		if err != nil {
			return nil, nil, err
		}
		return cmd, tr, nil
	case TrackSubreaper:
		return t.startAdopting(cmd, mark)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, newGroupTree(cmd.Process.Pid), nil
}

// startInCgroup starts cmd directly in a new cgroup of its own
// (CLONE_INTO_CGROUP); where clone3 is refused, it starts a copy of it and
// moves that in at once (a child it forks in the moment stays out).
func (t *Tracker) startInCgroup(cmd *exec.Cmd, inst string) (*exec.Cmd, *cgroupTree, error) {
	dir := filepath.Join(t.sys.cgroupDir, "server-"+inst)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, nil, fmt.Errorf("cgroup: %w", err)
	}
	t.mu.Lock()
	direct := !t.sys.noClone3
	t.mu.Unlock()
	if direct {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		err = cmd.Start()
		if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EPERM) {
			// No clone3 (an old kernel; a seccomp profile that refuses it
			// with ENOSYS, or EPERM). An exec.Cmd starts once: a copy.
			t.mu.Lock()
			t.sys.noClone3 = true
			t.mu.Unlock()
			t.logger.Debug("clone3 refused: MCP servers are moved into their cgroup after the start", "err", err)
			cmd = cloneCmd(cmd)
			direct = false
		}
	}
	if !direct {
		cmd.SysProcAttr.UseCgroupFD = false
		cmd, err = t.startThenMove(cmd, dir)
	}
	_ = unix.Close(fd)
	if err != nil {
		_ = os.Remove(dir)
		return nil, nil, err
	}
	return cmd, &cgroupTree{groupTree: newGroupTree(cmd.Process.Pid), dir: dir, t: t}, nil
}

// startInCgroupAdopting is startInCgroup with the subreaper's net: the
// start and the server's registration under the launch lock, so that the
// reaper never takes the leader for an adopted process.
func (t *Tracker) startInCgroupAdopting(cmd *exec.Cmd, inst, mark string) (*exec.Cmd, tree, error) {
	t.launch.Lock()
	cmd, tr, err := t.startInCgroup(cmd, inst)
	var s *server
	if err == nil {
		s = t.register(cmd.Process.Pid, mark, tr.dir)
	}
	t.launch.Unlock()
	if err != nil {
		return nil, nil, err
	}
	t.writeRecord()
	tr.net = &reaperTree{groupTree: tr.groupTree, t: t, s: s}
	return cmd, tr, nil
}

// startThenMove starts cmd and moves it into the cgroup dir before it
// runs any code of its own: it starts traced, so it stops at its exec, is
// moved, and let go (a child it forks is then in the cgroup too). Where
// tracing is refused (a seccomp profile, Yama's ptrace_scope 3) it starts
// untraced and is moved at once: a child it forks in that moment stays
// out.
func (t *Tracker) startThenMove(cmd *exec.Cmd, dir string) (*exec.Cmd, error) {
	move := func(pid int) {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.logger.Warn("MCP server not moved into its cgroup", "dir", dir, "err", err)
		}
	}
	t.mu.Lock()
	traced := !t.sys.noPtrace
	t.mu.Unlock()
	if traced {
		err := t.startTraced(cmd, move)
		if !errors.Is(err, syscall.EPERM) {
			return cmd, err
		}
		t.mu.Lock()
		t.sys.noPtrace = true // for every later start: refused once, refused always
		t.mu.Unlock()
		t.logger.Debug("tracing refused: MCP servers are moved into their cgroup right after the start", "err", err)
		cmd = cloneCmd(cmd) // an exec.Cmd starts once
	}
	cmd.SysProcAttr.Ptrace = false
	if err := cmd.Start(); err != nil {
		return cmd, err
	}
	move(cmd.Process.Pid)
	return cmd, nil
}

// startTraced starts cmd traced, so that it stops at its exec, runs move
// on it, and lets it go.
func (t *Tracker) startTraced(cmd *exec.Cmd, move func(pid int)) error {
	// The tracer is the thread that started the child: the detach must
	// come from it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	_, werr := unix.Wait4(pid, &ws, unix.WALL, nil) // its stop at the exec (SIGTRAP); nothing else can come first
	move(pid)
	if werr == nil && ws.Stopped() {
		if err := unix.PtraceDetach(pid); err != nil {
			t.logger.Warn("MCP server traced for its start not let go", "pid", pid, "err", err)
		}
	}
	return nil
}

// cloneCmd is a copy of a cmd that failed to start, to start again.
func cloneCmd(c *exec.Cmd) *exec.Cmd {
	n := exec.Command(c.Path, c.Args[1:]...)
	n.Env, n.Dir = c.Env, c.Dir
	n.Stdin, n.Stdout, n.Stderr = c.Stdin, c.Stdout, c.Stderr
	attr := *c.SysProcAttr
	n.SysProcAttr = &attr
	return n
}

// cgroupTree is a server's cgroup: everything it started, wherever it
// went in the process tree, except what moved itself to another cgroup —
// which the subreaper's net (when the bot is a subreaper too) follows once
// it is orphaned.
type cgroupTree struct {
	*groupTree
	dir string
	t   *Tracker
	net *reaperTree // the server as the subreaper knows it; nil: no net
}

func (c *cgroupTree) snapshot() {
	if c.net != nil {
		c.net.snapshot()
		return
	}
	c.groupTree.snapshot()
}

// procs are the processes in the cgroup and the cgroups below it (a
// process may make one and move there).
func (c *cgroupTree) procs() []int { return cgroupTreeProcs(c.dir) }

func (c *cgroupTree) alive() bool {
	return len(c.procs()) > 0 || (c.net != nil && c.net.alive())
}

func (c *cgroupTree) pending() bool {
	return anyPending(c.procs()) || (c.net != nil && c.net.pending())
}

func (c *cgroupTree) signal(sig syscall.Signal) {
	if c.net != nil {
		c.net.signal(sig)
	} else {
		c.groupTree.signal(sig)
	}
	for _, pid := range c.procs() {
		_ = syscall.Kill(pid, sig)
	}
}

func (c *cgroupTree) kill() {
	killCgroup(c.dir)
	if c.net != nil {
		c.net.kill()
	} else {
		c.groupTree.kill()
	}
}

func (c *cgroupTree) release() {
	if c.alive() {
		c.kill()
	}
	if err := removeCgroup(c.dir, killWait); err != nil {
		c.t.logger.Warn("MCP server's cgroup not removed", "dir", c.dir, "err", err)
	}
	if c.net != nil {
		c.net.release()
	}
}

func (t *Tracker) closeSys() {
	t.mu.Lock()
	mode, self, id := t.mode, t.sys.self, t.sys.id
	t.mu.Unlock()
	if id == "" {
		return // never opened
	}
	// In every mode: the processes that carry the mark of a server of this
	// tracker (no server runs any more). First, so that the subreaper
	// reaps them.
	prefix := id + "."
	if killed := killAll(func() []int {
		var pids []int
		for _, m := range markedProcesses(t.o.Owner) {
			if m.spawner == self.pid && m.start == self.start && strings.HasPrefix(m.instance, prefix) {
				pids = append(pids, m.pid)
			}
		}
		return pids
	}); len(killed) > 0 {
		t.logger.Info("ended processes left by MCP servers", "pids", killed)
	}
	switch mode {
	case TrackCgroup:
		if len(cgroupTreeProcs(t.sys.cgroupDir)) > 0 {
			killCgroup(t.sys.cgroupDir)
		}
		if err := removeCgroup(t.sys.cgroupDir, killWait); err != nil {
			t.logger.Warn("the MCP servers' cgroup not removed", "dir", t.sys.cgroupDir, "err", err)
		}
		if t.sys.servers != nil {
			t.closeSubreaper() // what left the cgroups; and reaps what the kill left
		}
	case TrackSubreaper:
		t.closeSubreaper()
	}
}

// ReapOrphans ends what earlier runs of the tracker's owner left behind
// (see the package's ReapOrphans), and besides: the processes in the
// cgroups of those runs, and in their records (in the state directory) the processes of
// their trees. It returns the pids ended. Call it after Open, at start;
// the processes of a bot process still running are never touched.
func (t *Tracker) ReapOrphans() []int {
	self := readSelf()
	killed := ReapOrphans(t.o.Owner)
	if own, err := ownCgroupDir(); err == nil {
		killed = append(killed, reapCgroups(own, t.o.Owner, self)...)
	}
	if t.stateDir != "" {
		killed = append(killed, t.reapRecords(self)...)
	}
	slices.Sort(killed)
	return slices.Compact(killed)
}

// reapCgroups ends the cgroups of the owner's bot processes that no longer
// run, under the bot's own cgroup, and removes them; the empty ones a bot
// of another owner left are removed too.
func reapCgroups(own, owner string, self selfInfo) []int {
	entries, err := os.ReadDir(own)
	if err != nil {
		return nil
	}
	var killed []int
	for _, e := range entries {
		dir := filepath.Join(own, e.Name())
		bot, ours := parseCgroupName(owner, e.Name())
		if !ours {
			if other, ok := parseAnyCgroupName(e.Name()); ok && e.IsDir() && other != self.procKey &&
				!spawnerAlive(other.pid, other.start) && len(cgroupTreeProcs(dir)) == 0 {
				_ = removeCgroup(dir, 0)
			}
			continue
		}
		if !e.IsDir() || bot == self.procKey || spawnerAlive(bot.pid, bot.start) {
			continue
		}
		killed = append(killed, cgroupTreeProcs(dir)...)
		killCgroup(dir)
		_ = removeCgroup(dir, killWait)
	}
	return killed
}
