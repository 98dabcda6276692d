//go:build !linux

package stdio

import "syscall"

// sysProcAttr puts the child in a session (and a process group) of its
// own. Only Linux can kill it with the bot (Pdeathsig).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// descendantGroups is pid's own group: without /proc, the groups of its
// descendants are not known.
func descendantGroups(pid int) []int { return []int{pid} }

// groupsAlive reports whether a process of one of the groups is still
// running.
func groupsAlive(groups []int) bool {
	for _, g := range groups {
		if syscall.Kill(-g, 0) == nil {
			return true
		}
	}
	return false
}

// groupsPending is groupsAlive: without /proc, a process that ignores
// SIGTERM cannot be told from one on its way out.
func groupsPending(groups []int) bool { return groupsAlive(groups) }
