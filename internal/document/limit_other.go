//go:build !linux

package document

import (
	"os/exec"
	"runtime/debug"
	"time"
)

// limitMemory tells the garbage collector bytes; only Linux has a hard
// limit (the child's timeout still ends a runaway).
func limitMemory(bytes int64) error {
	debug.SetMemoryLimit(bytes / 2)
	return nil
}

// limitCPU does nothing here: the child's own timer ends it.
func limitCPU(time.Duration) error { return nil }

// peakOf is unknown here (only Linux's resource usage is read).
func peakOf(*exec.Cmd) string { return "unknown" }
