package stdio

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the child in a session of its own (and so a process
// group of its own, which it leads) and kills it with the bot (Pdeathsig
// reaches only the direct child; see MarkEnv and Tracker for the rest). No
// process can join a session: every process of the server's tree that
// does not call setsid() stays in it, orphaned or not, whatever groups it
// makes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// descendantGroups returns the process group of pid and the groups of all
// its live descendants, read from /proc. pid leads its own group.
func descendantGroups(pid int) []int {
	groups := []int{pid}
	stats := procStats()
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

// groupsAlive reports whether a process of one of the groups is still
// running (zombies do not count: they are only waiting to be reaped).
func groupsAlive(groups []int) bool {
	in := make(map[int]bool, len(groups))
	for _, g := range groups {
		in[g] = true
	}
	for _, s := range procStats() {
		if in[s.pgid] && s.state != 'Z' {
			return true
		}
	}
	return false
}

// groupsPending reports whether a process of one of the groups still runs
// that does not ignore SIGTERM: one that may be on its way out after it.
// A process that ignores SIGTERM is not waited for: it will not end on it.
func groupsPending(groups []int) bool {
	in := make(map[int]bool, len(groups))
	for _, g := range groups {
		in[g] = true
	}
	for pid, s := range procStats() {
		if in[s.pgid] && s.state != 'Z' && actsOnTERM(pid) {
			return true
		}
	}
	return false
}

// anyPending reports whether one of pids runs and does not ignore SIGTERM.
func anyPending(pids []int) bool {
	for _, pid := range pids {
		if actsOnTERM(pid) {
			return true
		}
	}
	return false
}

// actsOnTERM reports whether pid runs (not a zombie) and does not ignore
// SIGTERM (its SigIgn mask in /proc/<pid>/status).
func actsOnTERM(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if state, ok := strings.CutPrefix(line, "State:"); ok && strings.HasPrefix(strings.TrimSpace(state), "Z") {
			return false
		}
		if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			ign, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			return err != nil || ign&(1<<(uint(syscall.SIGTERM)-1)) == 0
		}
	}
	return true
}

type procStat struct {
	ppid, pgid, sid int
	state           byte // 'Z' for a zombie
	start           uint64
}

// procStats reads /proc/<pid>/stat of every process.
func procStats() procTable {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	stats := make(procTable, len(entries))
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readStat(id); ok {
			stats[id] = s
		}
	}
	return stats
}

// readStat parses ppid, pgid, the session, the state letter and the start
// time (clock ticks after boot) from /proc/<pid>/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may contain spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, pgid: pgid, sid: sid, state: f[0][0], start: start}, true
}
