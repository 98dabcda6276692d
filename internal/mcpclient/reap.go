package mcpclient

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// OwnerEnv is the variable every server process (and so every process it
// starts, such as a browser) carries in its environment: the owner mark of
// the bot that spawned it. A bot killed with SIGKILL cannot stop its
// children's children (Pdeathsig reaches only the direct child, and a
// browser may run in a process group of its own); the next start finds them
// by this mark and ends them.
const OwnerEnv = "VOLCANICBOT_OWNER"

// MarkedProcesses returns the pids of the live processes (not zombies) that
// carry owner's mark, this process excluded. Processes this user cannot
// inspect are skipped.
func MarkedProcesses(owner string) []int {
	if owner == "" {
		return nil
	}
	mark := []byte(OwnerEnv + "=" + owner + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), mark) {
			continue
		}
		if _, _, state, ok := readStatState(pid); ok && state != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ReapOrphans kills every process that carries owner's mark (see OwnerEnv)
// and returns their pids. Call it at start, before any server is spawned:
// then every marked process is a leftover of an earlier run.
func ReapOrphans(owner string) []int {
	var killed []int
	for _, pid := range MarkedProcesses(owner) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
