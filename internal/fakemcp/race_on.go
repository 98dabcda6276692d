//go:build race

package fakemcp

// raceEnabled: under the race detector a process that exits 0 through
// os.Exit first sleeps a second (GORACE atexit_sleep_ms), once per fake
// stop; MainIfRequested avoids that.
const raceEnabled = true
