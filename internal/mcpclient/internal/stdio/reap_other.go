//go:build !linux

package stdio

import "syscall"

// markedProcesses finds nothing without /proc: orphans are not reaped.
func markedProcesses(string) []marked { return nil }

func startTime(int) uint64 { return 0 }

func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }

func kill(pid int) bool { return syscall.Kill(pid, syscall.SIGKILL) == nil }
