package stdio

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// markedProcesses lists the live processes carrying a mark of owner.
func markedProcesses(owner string) []marked {
	if owner == "" {
		return nil
	}
	prefix := []byte(MarkEnv + "=")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []marked
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			v, ok := bytes.CutPrefix(kv, prefix)
			if !ok {
				continue
			}
			o, spawner, start := parseMark(string(v))
			if o != owner {
				break
			}
			if st, ok := readStat(pid); ok && st.state != 'Z' {
				out = append(out, marked{pid: pid, spawner: spawner, start: start})
			}
			break
		}
	}
	return out
}

// startTime is pid's start time in clock ticks after boot; 0 when unknown.
func startTime(pid int) uint64 {
	st, _ := readStat(pid)
	return st.start
}

func processRunning(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z'
}

func kill(pid int) bool { return syscall.Kill(pid, syscall.SIGKILL) == nil }
