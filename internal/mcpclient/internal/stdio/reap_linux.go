package stdio

import (
	"bytes"
	"maps"
	"os"
	"slices"
	"strconv"
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
			m := parseMark(string(v))
			if m.owner != owner {
				break
			}
			if st, ok := readStat(pid); ok && st.state != 'Z' {
				out = append(out, marked{pid: pid, spawner: m.spawner, start: m.start, instance: m.instance})
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

// reapMarked kills the orphans and their trees.
func reapMarked(orphans []marked) []int {
	self := readSelf()
	tab := procStats()
	keys := map[procKey]bool{}
	ids := map[int]bool{}
	for _, m := range orphans {
		st, ok := tab[m.pid]
		if !ok {
			continue
		}
		keys[procKey{m.pid, st.start}] = true
		switch {
		case m.instance != "":
			ids[st.sid], ids[st.pgid] = true, true
		default:
			if st.sid == m.pid {
				ids[m.pid] = true
			}
			if st.pgid == m.pid {
				ids[m.pid] = true
			}
		}
	}
	for _, id := range []int{0, 1, self.sid, self.pgid} {
		delete(ids, id)
	}
	return killAll(func() []int {
		tab := procStats()
		set := map[int]bool{}
		for pid, st := range tab {
			if pid != self.pid && st.state != 'Z' && (keys[procKey{pid, st.start}] || ids[st.sid] || ids[st.pgid]) {
				set[pid] = true
			}
		}
		tab.closure(set)
		delete(set, self.pid)
		return slices.Collect(maps.Keys(set))
	})
}
