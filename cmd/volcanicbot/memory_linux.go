package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// memoryLimit is the memory the bot may use: the limit of its cgroup (v2
// memory.max, or v1 memory.limit_in_bytes), else the machine's RAM; 0
// when neither can be read.
func memoryLimit() int64 {
	ram := memTotal()
	for _, p := range cgroupMemoryFiles() {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			break
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && (ram == 0 || n < ram) {
			return n
		}
		break
	}
	return ram
}

// cgroupMemoryFiles are the limit files of the bot's own cgroup: v2 first,
// then v1, each under the path /proc/self/cgroup names.
func cgroupMemoryFiles() []string {
	var v2, v1 []string
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = append(v2, "/sys/fs/cgroup"+parts[2]+"/memory.max", "/sys/fs/cgroup/memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			v1 = append(v1, "/sys/fs/cgroup/memory"+parts[2]+"/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	return append(v2, v1...)
}

// memTotal is MemTotal of /proc/meminfo, in bytes; 0 when unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
