//go:build !linux

package stdio

import "syscall"

// markedProcesses finds nothing without /proc: orphans are not reaped.
func markedProcesses(string) []marked { return nil }

func startTime(int) uint64 { return 0 }

func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }

// reapMarked kills the orphans (without /proc: none are found).
func reapMarked(orphans []marked) []int {
	var killed []int
	for _, m := range orphans {
		if syscall.Kill(m.pid, syscall.SIGKILL) == nil {
			killed = append(killed, m.pid)
		}
	}
	return killed
}
