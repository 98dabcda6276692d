package document

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// limitMemory lets this process map at most extra bytes more than it has
// mapped now: an allocation past that fails and the Go runtime ends the
// process. (The limit is on address space, which the Go runtime reserves
// generously at start — near a gigabyte — hence relative to now.) The
// garbage collector is told half of it, so that it works harder first.
func limitMemory(extra int64) error {
	debug.SetMemoryLimit(extra / 2)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	var size int64
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmSize:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return fmt.Errorf("VmSize %q: %w", v, err)
			}
			size = kb << 10
		}
	}
	if size == 0 {
		return fmt.Errorf("no VmSize in /proc/self/status")
	}
	limit := uint64(size + extra)
	return unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit})
}

// limitCPU ends this process once it has used d of processor time
// (SIGXCPU at the soft limit, SIGKILL a second later).
func limitCPU(d time.Duration) error {
	secs := uint64(max(d.Round(time.Second)/time.Second, 1))
	return unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1})
}

// peakOf is the finished child's peak resident memory, for the
// operator's log.
func peakOf(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "unknown"
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(ru.Maxrss)/1024) // KiB
}
