package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lockFileName is the lock of a data directory, in it.
const lockFileName = ".volcanic.lock"

// dataDirLock is the exclusive lock (flock) a running bot holds on its data
// directory for as long as it runs; the file says which process holds it.
type dataDirLock struct{ f *os.File }

// DataDirInUseError is the refusal of a second bot on a data directory:
// another process holds its lock. The fix is to stop that one, or to give
// this one another VOLCANIC_DATA_DIR.
type DataDirInUseError struct {
	Dir string
	// PID, Host and Since are what the holder wrote in the lock file (zero
	// when it has not written yet).
	PID   int
	Host  string
	Since time.Time
}

func (e *DataDirInUseError) Error() string {
	who := "another volcanicbot"
	if e.PID > 0 {
		who = "volcanicbot pid " + strconv.Itoa(e.PID)
		if e.Host != "" {
			who += " on host " + e.Host
		}
		if !e.Since.IsZero() {
			who += " since " + e.Since.Local().Format(time.RFC3339)
		}
	}
	return fmt.Sprintf("the data directory %s is in use by %s; stop it first, or use another VOLCANIC_DATA_DIR", e.Dir, who)
}

// lockDataDir takes the lock of dir (created if needed), or fails with a
// *DataDirInUseError when another process holds it. The lock lasts until
// release or the end of the process.
func lockDataDir(dir string) (*dataDirLock, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			e := &DataDirInUseError{Dir: dir}
			e.PID, e.Host, e.Since = parseHolder(string(holder))
			return nil, e
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d\nhost %s\nsince %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(holder), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	return &dataDirLock{f: f}, nil
}

// parseHolder reads what lockDataDir writes in the lock file.
func parseHolder(s string) (pid int, host string, since time.Time) {
	for line := range strings.SplitSeq(s, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "pid":
			pid, _ = strconv.Atoi(v)
		case "host":
			host = v
		case "since":
			since, _ = time.Parse(time.RFC3339, v)
		}
	}
	return pid, host, since
}

// release lets the next bot take the data directory. Safe on nil.
func (l *dataDirLock) release() {
	if l != nil {
		l.f.Close()
	}
}
