package preset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// Chromium keeps a profile for one browser at a time with three symlinks in
// it: SingletonLock → "<hostname>-<pid>", SingletonSocket and
// SingletonCookie. A browser that is killed leaves them behind. On the same
// host Chromium sees that the pid is gone and takes the profile over; on
// another host it refuses ("Browser is already in use for <profile>") —
// and every redeploy of the container is another host (a new hostname) on
// the same volume.
var singletonFiles = []string{"SingletonLock", "SingletonSocket", "SingletonCookie"}

// clearStaleProfileLock is the preset's BeforeStart: before each start of
// the browser server, the lock of its profile (the --user-data-dir of the
// command) is removed when the browser that holds it no longer runs — one
// of another host, or of this host whose process is gone. A lock of a live
// browser of this host is left to Chromium.
func clearStaleProfileLock(sp mcpconfig.Spawn) error {
	dir := lastFlagValue(sp.Args, "--user-data-dir")
	if dir == "" {
		return nil
	}
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return nil // no lock (or no profile yet)
	}
	host, pid := lockOwner(target)
	if self, err := os.Hostname(); err == nil && host == self && pid > 0 && syscall.Kill(pid, 0) == nil {
		return nil // a live browser here: not ours to take over
	}
	for _, name := range singletonFiles {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear the stale lock of the browser profile %s: %w", dir, err)
		}
	}
	return nil
}

// lockOwner splits a SingletonLock target "<hostname>-<pid>" (the hostname
// may hold dashes).
func lockOwner(target string) (host string, pid int) {
	i := strings.LastIndexByte(target, '-')
	if i < 0 {
		return target, 0
	}
	pid, _ = strconv.Atoi(target[i+1:])
	return target[:i], pid
}

// lastFlagValue is the value of the last "--flag value" or "--flag=value"
// in args (the one the command line parser keeps).
func lastFlagValue(args []string, flag string) string {
	v := ""
	for i, a := range args {
		switch {
		case a == flag && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, flag+"="):
			v = strings.TrimPrefix(a, flag+"=")
		}
	}
	return v
}
