package stdio

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// TreeMemory is the memory of the process and all its live descendants:
// the sum of their proportional set sizes (PSS, from smaps_rollup: shared
// pages split between the processes sharing them, so a browser's renderers
// are not counted many times over), or of their resident sets where PSS
// cannot be read. 0 once the process has exited.
func (p *Process) TreeMemory() int64 {
	if p.Done() {
		return 0
	}
	stats := procStats()
	children := make(map[int][]int, len(stats))
	for id, s := range stats {
		children[s.ppid] = append(children[s.ppid], id)
	}
	var total int64
	queue := []int{p.pid}
	seen := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		total += processMemory(pid)
		queue = append(queue, children[pid]...)
	}
	return total
}

// processMemory is pid's PSS, or its RSS, in bytes.
func processMemory(pid int) int64 {
	dir := "/proc/" + strconv.Itoa(pid)
	if f, err := os.Open(dir + "/smaps_rollup"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Pss:")); ok {
				if kb, err := strconv.ParseInt(string(bytes.Fields(v)[0]), 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	b, err := os.ReadFile(dir + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
