package stdio

import (
	"os"
	"strconv"
	"strings"
)

// MarkEnv is the variable every server process (and so every process it
// starts, such as a browser) carries in its environment: the mark of the
// bot that spawned it. A bot killed with SIGKILL cannot stop its children's
// children (Pdeathsig reaches only the direct child, and a browser runs in
// a process group of its own); the next start finds them by this mark and
// ends them.
const MarkEnv = "VOLCANICBOT_OWNER"

// Mark returns the mark of the processes this bot process spawns for
// owner (the bot's data directory, hashed): "<owner>:<pid>:<start>", the
// owner and which process of the bot spawned them (its pid and start
// time), so that a bot ending what a dead one left never touches the
// processes of one still running beside it (a check, a second bot).
func Mark(owner string) string {
	pid := os.Getpid()
	return owner + ":" + strconv.Itoa(pid) + ":" + strconv.FormatUint(startTime(pid), 10)
}

// markInfo is a parsed mark: "<owner>:<spawner pid>:<spawner start>", and
// with a Tracker ":<instance>", the server the process belongs to. An old
// mark without the spawner ("<owner>") has pid 0.
type markInfo struct {
	owner    string
	spawner  int
	start    uint64
	instance string
}

func parseMark(mark string) markInfo {
	owner, rest, ok := strings.Cut(mark, ":")
	if !ok {
		return markInfo{owner: owner}
	}
	p, rest, _ := strings.Cut(rest, ":")
	s, instance, _ := strings.Cut(rest, ":")
	m := markInfo{owner: owner, instance: instance}
	m.spawner, _ = strconv.Atoi(p)
	m.start, _ = strconv.ParseUint(s, 10, 64)
	return m
}

// spawnerAlive reports whether the bot process that wrote a mark runs.
func spawnerAlive(pid int, start uint64) bool {
	return pid > 0 && processRunning(pid) && startTime(pid) == start
}

// MarkedProcesses returns the pids of the live processes (not zombies) that
// carry a mark of owner, whichever bot process spawned them, this process
// excluded. Processes this user cannot inspect are skipped.
func MarkedProcesses(owner string) []int {
	var pids []int
	for _, m := range markedProcesses(owner) {
		pids = append(pids, m.pid)
	}
	return pids
}

// ReapOrphans kills the processes that carry a mark of owner left by a bot
// process that no longer runs, and their trees: their descendants, and the
// members of the sessions and groups of their servers' trees (a process of
// a server started with a Tracker, whose mark names its instance, is in a
// session of its server's; for an older mark, the sessions and groups the
// marked processes lead). It returns the pids killed. The processes of a
// bot process still running are left alone. Tracker.ReapOrphans ends more.
func ReapOrphans(owner string) []int {
	var orphans []marked
	for _, m := range markedProcesses(owner) {
		if !spawnerAlive(m.spawner, m.start) {
			orphans = append(orphans, m)
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	return reapMarked(orphans)
}

type marked struct {
	pid, spawner int
	start        uint64
	instance     string
}
