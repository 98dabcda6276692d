//go:build unix && !linux

package session

import "os"

// openBeneath opens rel beneath dir, one component at a time (see
// openWalk): there is no openat2 here.
func openBeneath(dir *os.File, rel string) (int, error) { return openWalk(dir, rel) }
