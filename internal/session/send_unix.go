//go:build unix

package session

import (
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags open the file to send: for reading, never following a
// symlink, never waiting (a FIFO), never becoming a terminal.
const openFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY

// openWalk opens rel (clean, '/'-separated, no "..") beneath dir one
// component at a time, each with O_NOFOLLOW relative to the folder opened
// before it: a symlink at any component fails the open (ELOOP), and a
// component swapped meanwhile cannot redirect it.
func openWalk(dir *os.File, rel string) (int, error) {
	parts := strings.Split(rel, "/")
	base := int(dir.Fd())
	cur := base
	defer func() {
		if cur != base {
			unix.Close(cur)
		}
	}()
	for _, p := range parts[:len(parts)-1] {
		next, err := openat(cur, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			var st unix.Stat_t
			if err == unix.ENOTDIR && unix.Fstatat(cur, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP // Linux says ENOTDIR for a symlink opened with O_DIRECTORY|O_NOFOLLOW
			}
			return -1, err
		}
		if cur != base {
			unix.Close(cur)
		}
		cur = next
	}
	return openat(cur, parts[len(parts)-1], openFlags)
}

// openat is unix.Openat retried on EINTR.
func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// linkCount is how many names the file has.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
