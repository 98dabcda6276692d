package stdio

import (
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// server is one server's tree as the subreaper mode knows it. Guarded by
// the Tracker's mu.
type server struct {
	leader procKey
	mark   string // its mark, with its instance; empty: none
	cgroup string // its cgroup in the cgroup mode (everything in it is its); empty: none
	// seen are the processes seen in the tree, the leader included.
	seen map[procKey]bool
	// ids are the sessions and process groups of the tree: the pids of its
	// processes (which may lead one), and the sessions and groups its
	// processes were seen in. The value is the start time of the process
	// of that pid, 0 when it was not seen. An id whose process is gone and
	// whose session and group are empty is dropped: its pid may be reused.
	ids map[int]uint64
}

func (t *Tracker) openSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	t.sys.servers = map[int]*server{}
	t.sys.strays = map[procKey]bool{}
	t.sys.known = map[procKey]bool{}
	t.sys.stop, t.sys.done = make(chan struct{}), make(chan struct{})
	if t.stateDir != "" {
		t.sys.record = filepath.Join(t.stateDir, recordName(t.sys.self.procKey))
		t.sys.boot, t.sys.pidns = bootID(), pidNamespace()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go t.reaper(sigs)
	return nil
}

// reaper is the subreaper mode's goroutine: it reaps the adopted processes
// that exit, and looks at the trees every scanInterval. It ends with Close.
func (t *Tracker) reaper(sigs chan os.Signal) {
	defer close(t.sys.done)
	defer signal.Stop(sigs)
	tick := time.NewTicker(t.o.ScanInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.sys.stop:
			return
		case <-sigs:
			t.reapZombies()
		case <-tick.C:
			t.scanAll()
			t.reapZombies()
		}
	}
}

// startAdopting starts cmd and registers it, under the launch lock: the
// reaper never takes the leader for an adopted process.
func (t *Tracker) startAdopting(cmd *exec.Cmd, mark string) (*exec.Cmd, tree, error) {
	t.launch.Lock()
	err := cmd.Start()
	var s *server
	if err == nil {
		s = t.register(cmd.Process.Pid, mark, "")
	}
	t.launch.Unlock()
	if err != nil {
		return nil, nil, err
	}
	t.writeRecord()
	return cmd, &reaperTree{groupTree: newGroupTree(s.leader.pid), t: t, s: s}, nil
}

// register notes a server just started, its leader pid, its mark and its
// cgroup (empty: none). Call it under the launch lock.
func (t *Tracker) register(pid int, mark, cgroup string) *server {
	st, _ := readStat(pid)
	s := &server{leader: procKey{pid, st.start}, mark: mark, cgroup: cgroup,
		seen: map[procKey]bool{{pid, st.start}: true}, ids: map[int]uint64{pid: st.start}}
	t.mu.Lock()
	t.sys.servers[pid] = s
	t.mu.Unlock()
	return s
}

// members returns the live processes of s's tree in tab: those seen in it
// before, those in one of its sessions or groups, with marks those that
// carry its mark, and the descendants of all of them. It notes them in s.
// Only the bot's descendants are looked at: a subreaper's orphans come to
// it (or to a subreaper in a tree), so every process of a tree is one.
func (t *Tracker) members(s *server, tab procTable, marks bool) map[int]bool {
	self := t.sys.self
	mine := map[int]bool{self.pid: true}
	tab.closure(mine)
	var inCgroup []int
	if s.cgroup != "" { // set at the start, never changed
		inCgroup = cgroupTreeProcs(s.cgroup)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, start := range s.ids {
		if !idInUse(tab, id, start) {
			delete(s.ids, id)
		}
	}
	for k := range s.seen {
		if st, ok := tab[k.pid]; !ok || st.start != k.start {
			delete(s.seen, k) // gone: the set stays as small as the tree
		}
	}
	set := map[int]bool{}
	for _, pid := range inCgroup {
		if st, ok := tab[pid]; ok && st.state != 'Z' {
			set[pid] = true // wherever it is in the process tree
		}
	}
	for pid, st := range tab {
		if pid == self.pid || !mine[pid] || st.state == 'Z' || st.start < s.leader.start {
			continue // the bot, not its descendant, a zombie, or older than the server
		}
		_, inSession := s.ids[st.sid]
		_, inGroup := s.ids[st.pgid]
		switch {
		case s.seen[procKey{pid, st.start}]:
		case inSession && st.sid != self.sid, inGroup && st.pgid != self.pgid:
		case marks && s.mark != "" && hasMark(pid, s.mark):
		default:
			continue
		}
		set[pid] = true
	}
	tab.closure(set)
	for pid := range set {
		st := tab[pid]
		s.seen[procKey{pid, st.start}] = true
		if pid != s.leader.pid {
			t.sys.known[procKey{pid, st.start}] = true
		}
		for _, id := range []int{pid, st.sid, st.pgid} {
			if _, ok := s.ids[id]; !ok && id != self.sid && id != self.pgid && id > 1 {
				s.ids[id] = tab[id].start // 0 when its process is gone
			}
		}
	}
	return set
}

// idInUse reports whether the session or group id of a tree can still be
// trusted: its process runs (the same one: its start time matches, when
// known), or a session or group of that id has members, which keeps the
// pid from being reused.
func idInUse(tab procTable, id int, start uint64) bool {
	if st, ok := tab[id]; ok && st.state != 'Z' {
		return start == 0 || st.start == start
	}
	for _, st := range tab {
		if st.sid == id || st.pgid == id {
			return true
		}
	}
	return false
}

// startedBefore reports whether process a started before b: by start time
// (clock ticks), and within a tick by pid (pids are given in increasing
// order, but for a wrap-around within the tick).
func startedBefore(a, b procKey) bool {
	return a.start < b.start || a.start == b.start && a.pid < b.pid
}

func hasMark(pid int, mark string) bool {
	m, ok := markOf(pid)
	return ok && m == mark
}

// reaperTree is a server's tree in the subreaper mode.
type reaperTree struct {
	*groupTree
	t *Tracker
	s *server
}

func (r *reaperTree) snapshot() {
	r.groupTree.snapshot()
	r.t.members(r.s, procStats(), true)
}

// alive looks by what was seen, sessions and groups first, and reads the
// marks only when that finds nothing.
func (r *reaperTree) alive() bool {
	if r.groupTree.alive() {
		return true
	}
	tab := procStats()
	return len(r.t.members(r.s, tab, false)) > 0 || len(r.t.members(r.s, tab, true)) > 0
}

func (r *reaperTree) pending() bool {
	return r.groupTree.pending() || anyPending(slices.Collect(maps.Keys(r.t.members(r.s, procStats(), true))))
}

func (r *reaperTree) signal(sig syscall.Signal) {
	r.groupTree.signal(sig)
	for pid := range r.t.members(r.s, procStats(), true) {
		_ = syscall.Kill(pid, sig)
	}
}

func (r *reaperTree) kill() {
	r.groupTree.kill()
	killAll(func() []int { return slices.Collect(maps.Keys(r.t.members(r.s, procStats(), true))) })
}

// release forgets the server and ends the adopted processes that no
// server can own any more: this one may have been the last that ran when
// they started.
func (r *reaperTree) release() {
	r.t.mu.Lock()
	delete(r.t.sys.servers, r.s.leader.pid)
	r.t.mu.Unlock()
	r.t.scanAll()
}

// scanAll looks at every tree: what each server's tree holds now is noted,
// and the adopted processes (children of the bot it did not start, out of
// its session) that no server claims are strays. A stray that started
// after every server still running is ended: the server it came from has
// stopped. The others are recorded, and ended when those servers have
// stopped, or at Close. The launch lock keeps a server being started from
// looking like a stray.
func (t *Tracker) scanAll() {
	end := t.sortStrays()
	if len(end) > 0 {
		// Each look sorts the strays again: a process that starts its
		// successor and exits (a new pid each time) hands the successor to
		// the bot between two looks, an orphan no server owns either.
		killed := killAll(func() []int {
			set := t.sortStrays()
			tab := procStats()
			for pid := range end {
				if st, ok := tab[pid]; ok && st.state != 'Z' {
					set[pid] = true
				}
			}
			tab.closure(set)
			return slices.Collect(maps.Keys(set))
		})
		t.logger.Info("ended processes left by stopped MCP servers", "pids", killed)
	}
	t.writeRecord()
}

// sortStrays notes what each server's tree holds now, and sorts the
// adopted processes no server claims: it keeps (and records) as strays
// those that started while a server that still runs did, and returns the
// others, which are to be ended.
func (t *Tracker) sortStrays() map[int]bool {
	t.launch.Lock()
	defer t.launch.Unlock()
	self := t.sys.self
	tab := procStats()
	t.mu.Lock()
	servers := slices.Collect(maps.Values(t.sys.servers))
	t.mu.Unlock()
	claimed := map[int]bool{}
	for _, s := range servers {
		maps.Copy(claimed, t.members(s, tab, true))
	}
	end := map[int]bool{}
	strays := map[procKey]bool{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, st := range tab {
		if st.ppid != self.pid || st.state == 'Z' || st.sid == self.sid || claimed[pid] || t.sys.servers[pid] != nil {
			continue
		}
		if t.othersLocked(pid) {
			continue
		}
		owned := false
		for _, s := range servers {
			if startedBefore(s.leader, procKey{pid, st.start}) {
				owned = true // it may be that server's
				break
			}
		}
		if owned {
			strays[procKey{pid, st.start}] = true
		} else {
			end[pid] = true
		}
	}
	t.sys.strays = strays
	maps.Copy(t.sys.known, strays)
	for k := range t.sys.known {
		if st, ok := tab[k.pid]; !ok || st.start != k.start {
			delete(t.sys.known, k) // gone, and reaped
		}
	}
	return end
}

// reapZombies reaps the adopted children of the bot that exited: every
// zombie child but the servers' leaders (the exit watchers reap those),
// and but the children in the bot's own session or leading a session of
// their own that it never saw in a tree or adopted (other code of the
// process started them, and waits for them).
func (t *Tracker) reapZombies() int {
	t.launch.Lock()
	defer t.launch.Unlock()
	self := t.sys.self
	tab := procStats()
	var reap []procKey
	t.mu.Lock()
	for pid, st := range tab {
		if st.ppid != self.pid || st.state != 'Z' || t.sys.servers[pid] != nil {
			continue
		}
		k := procKey{pid, st.start}
		if (st.sid == self.sid || st.sid == pid) && !t.sys.known[k] {
			continue // started by other code of the process (in its session, or a session of its own)
		}
		reap = append(reap, k)
	}
	t.mu.Unlock()
	n := 0
	for _, k := range reap {
		// A process whose other threads are still exiting shows as a
		// zombie and cannot be reaped yet: its SIGCHLD is still to come.
		var ws unix.WaitStatus
		if got, err := unix.Wait4(k.pid, &ws, unix.WNOHANG, nil); err == nil && got == k.pid {
			t.mu.Lock()
			delete(t.sys.known, k)
			t.mu.Unlock()
			n++
		}
	}
	return n
}

// othersLocked reports whether pid carries the mark of another bot process
// still running, or of another Tracker of this one: not an orphan of this
// tracker's servers. (One Tracker per process is the rule; this keeps a
// second from ending the first one's servers.)
func (t *Tracker) othersLocked(pid int) bool {
	v, ok := markOf(pid)
	if !ok {
		return false
	}
	m := parseMark(v)
	if m.spawner == t.sys.self.pid && m.start == t.sys.self.start {
		return !strings.HasPrefix(m.instance, t.sys.id+".")
	}
	return spawnerAlive(m.spawner, m.start)
}

// closeSubreaper ends what is left: the processes of every server still
// registered, and every adopted process; reaps them, stops the reaper and
// the subreaper role, and removes the record.
func (t *Tracker) closeSubreaper() {
	close(t.sys.stop)
	<-t.sys.done
	self := t.sys.self
	adopted := func(tab procTable, zombies bool) map[int]bool {
		set := map[int]bool{}
		t.mu.Lock()
		for pid, st := range tab {
			if st.ppid != self.pid || st.sid == self.sid || t.sys.servers[pid] != nil {
				continue
			}
			if st.state == 'Z' {
				if zombies && (st.sid != pid || t.sys.known[procKey{pid, st.start}]) {
					set[pid] = true
				}
			} else if !t.othersLocked(pid) {
				set[pid] = true
			}
		}
		t.mu.Unlock()
		return set
	}
	t.launch.Lock()
	killed := killAll(func() []int {
		tab := procStats()
		set := adopted(tab, false)
		t.mu.Lock()
		servers := slices.Collect(maps.Values(t.sys.servers))
		t.mu.Unlock()
		for _, s := range servers {
			maps.Copy(set, t.members(s, tab, true))
		}
		tab.closure(set)
		return slices.Collect(maps.Keys(set))
	})
	t.launch.Unlock()
	if len(killed) > 0 {
		t.logger.Info("ended processes left by MCP servers", "pids", killed)
	}
	waitGone(func() bool {
		t.reapZombies()
		return len(adopted(procStats(), true)) > 0
	}, killWait)
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	if t.sys.record != "" {
		_ = os.Remove(t.sys.record)
	}
}
