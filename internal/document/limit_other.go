//go:build !linux

package document

import "runtime/debug"

// limitMemory tells the garbage collector bytes; only Linux has a hard
// limit (the child's timeout still ends a runaway).
func limitMemory(bytes int64) error {
	debug.SetMemoryLimit(bytes / 2)
	return nil
}
