package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel beneath dir in one step with openat2, which
// refuses any symlink on the way and any way out of dir; where openat2 is
// missing (Linux before 5.6) or refused (a seccomp profile that does not
// know it), it walks (openWalk).
func openBeneath(dir *os.File, rel string) (int, error) {
	how := unix.OpenHow{
		Flags:   openFlags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(int(dir.Fd()), rel, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.E2BIG):
			return openWalk(dir, rel)
		}
		return -1, err
	}
}
