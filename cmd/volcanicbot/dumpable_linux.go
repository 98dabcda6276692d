package main

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// makeUndumpable marks the process not dumpable (prctl PR_SET_DUMPABLE 0).
// A process of the same user, such as an MCP server the bot started, can then
// no longer read the bot's /proc/<pid>/environ (the bot token and the API
// keys), mem, maps or fd, nor ptrace it; only a process with CAP_SYS_PTRACE
// can. It is process-wide and written before anything starts. Children are
// not affected: execve makes a process dumpable again. No core dump is
// written either. docs/security.md says what it does not protect.
func makeUndumpable(stderr io.Writer) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "volcanicbot: warning: prctl(PR_SET_DUMPABLE, 0): %v: processes of the same user can read this one's environment\n", err)
	}
}
