package stdio

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procKey names one process for good: a pid is reused, a pid with its
// start time is not.
type procKey struct {
	pid   int
	start uint64
}

// self is this process as the trackers and reapers see it.
type selfInfo struct {
	procKey
	sid, pgid int
}

func readSelf() selfInfo {
	pid := os.Getpid()
	st, _ := readStat(pid)
	return selfInfo{procKey: procKey{pid, st.start}, sid: st.sid, pgid: st.pgid}
}

// procTable is one read of every process's stat.
type procTable map[int]procStat

// children indexes the live processes of the table by parent.
func (tab procTable) children() map[int][]int {
	out := make(map[int][]int, len(tab))
	for pid, st := range tab {
		if st.state != 'Z' {
			out[st.ppid] = append(out[st.ppid], pid)
		}
	}
	return out
}

// closure adds to set the live descendants (by parent) of its members.
func (tab procTable) closure(set map[int]bool) {
	kids := tab.children()
	queue := make([]int, 0, len(set))
	for pid := range set {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range kids[cur] {
			if !set[c] {
				set[c] = true
				queue = append(queue, c)
			}
		}
	}
}

// markOf returns the value of pid's mark (MarkEnv) in its environment as it
// was at exec, if it has one this process may read.
func markOf(pid int) (string, bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(MarkEnv + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// killAll ends for good the processes find returns, and those it returns
// once they are stopped: each is sent SIGSTOP first, so that none forks a
// child the next look misses, until a look finds nothing new; then all get
// SIGKILL. It returns the pids killed.
func killAll(find func() []int) []int {
	stopped := map[int]bool{}
	var order []int
	for range 100 {
		fresh := 0
		for _, pid := range find() {
			if stopped[pid] || pid <= 1 || pid == os.Getpid() {
				continue
			}
			if syscall.Kill(pid, syscall.SIGSTOP) == nil {
				stopped[pid] = true
				order = append(order, pid)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	var killed []int
	for _, pid := range order {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}

// bootID and pidNamespace tell a record of this boot and pid namespace
// from one whose pids mean other processes.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return string(bytes.TrimSpace(b))
}

func pidNamespace() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
}
