package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OOMCounter reads how many processes the kernel's OOM killer has ended:
// in the bot's memory cgroup (a container's, or a service's) and the
// cgroups below it, or, where the bot has none, on the whole machine.
// Every file it reads has the count on a line "oom_kill <n>".
type OOMCounter struct {
	// Path is memory.events (cgroup v2: it counts the cgroups below too),
	// memory.oom_control (cgroup v1, Linux 4.13 and later) or /proc/vmstat.
	Path string
	// Machine says the count is the machine's (/proc/vmstat): a kill in it
	// may be another program's.
	Machine bool
}

// FindOOMCounter is the counter of this process's memory cgroup: the v2
// memory.events of its cgroup, else the v1 memory.oom_control of its
// memory cgroup, else the machine's (/proc/vmstat).
func FindOOMCounter() (OOMCounter, error) {
	if dir, err := ownCgroupDir(); err == nil {
		c := OOMCounter{Path: filepath.Join(dir, "memory.events")}
		if _, err := c.Read(); err == nil {
			return c, nil
		}
	}
	if dir, err := ownMemoryCgroupV1(); err == nil {
		c := OOMCounter{Path: filepath.Join(dir, "memory.oom_control")}
		if _, err := c.Read(); err == nil {
			return c, nil
		}
	}
	c := OOMCounter{Path: "/proc/vmstat", Machine: true}
	if _, err := c.Read(); err != nil {
		return OOMCounter{}, fmt.Errorf("no OOM kill counter: %w", err)
	}
	return c, nil
}

// Read returns the count.
func (c OOMCounter) Read() (int64, error) {
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no oom_kill count", c.Path)
}

// ownMemoryCgroupV1 is the directory of this process's cgroup v1 memory
// cgroup: the mount of the memory controller joined with the path in
// /proc/self/cgroup ("<n>:memory:/…").
func ownMemoryCgroupV1() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, found := "", false
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") {
			path, found = f[2], true
			break
		}
	}
	if !found {
		return "", errors.New("no cgroup v1 memory controller")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		// id parent major:minor root mountpoint options … - cgroup source superoptions
		f := strings.Fields(line)
		for i, x := range f {
			if x != "-" || i+3 >= len(f) || f[i+1] != "cgroup" || !strings.Contains(","+f[i+3]+",", ",memory,") {
				continue
			}
			root, point := unescapeMount(f[3]), unescapeMount(f[4])
			rel, ok := strings.CutPrefix(path, root)
			if !ok {
				return "", fmt.Errorf("the memory cgroup mount at %s shows %s, not %s", point, root, path)
			}
			return filepath.Join(point, rel), nil
		}
	}
	return "", errors.New("no cgroup v1 memory mount")
}

// ServerOOMScoreAdj is the oom_score_adj every server process starts with
// (its children inherit it): under memory pressure the kernel's OOM killer
// ends a process of a server — a browser's renderer, say — rather than
// the bot, which then says so and goes on answering.
const ServerOOMScoreAdj = 500

// raiseOOMScore sets the oom_score_adj of the server pid just started to
// ServerOOMScoreAdj (raising it needs no privilege), and then that of the
// descendants it already forked (they forked before the leader's was
// raised; whatever forks after inherits it). The leader's failure is
// returned for the debug log.
func raiseOOMScore(pid int) error {
	value := []byte(strconv.Itoa(ServerOOMScoreAdj))
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", value, 0); err != nil {
		return err
	}
	tree := map[int]bool{pid: true}
	procStats().closure(tree)
	for p := range tree {
		if p != pid {
			_ = os.WriteFile("/proc/"+strconv.Itoa(p)+"/oom_score_adj", value, 0)
		}
	}
	return nil
}
