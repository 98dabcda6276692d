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

// parseMark splits a mark; an old mark without the spawner ("<owner>")
// has pid 0.
func parseMark(mark string) (owner string, pid int, start uint64) {
	owner, rest, ok := strings.Cut(mark, ":")
	if !ok {
		return owner, 0, 0
	}
	p, s, _ := strings.Cut(rest, ":")
	pid, _ = strconv.Atoi(p)
	start, _ = strconv.ParseUint(s, 10, 64)
	return owner, pid, start
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
// process that no longer runs, and returns their pids. The processes of a
// bot process still running are left alone.
func ReapOrphans(owner string) []int {
	var killed []int
	for _, m := range markedProcesses(owner) {
		if spawnerAlive(m.spawner, m.start) {
			continue
		}
		if kill(m.pid) {
			killed = append(killed, m.pid)
		}
	}
	return killed
}

type marked struct {
	pid, spawner int
	start        uint64
}
