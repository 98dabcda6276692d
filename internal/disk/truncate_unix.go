//go:build unix

package disk

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// truncateIn empties the regular file rel of root and returns how many
// bytes it held. It never follows a symlink out of root nor at rel's last
// component, and never empties a file with another name (a hard link):
// only a file its writer made itself.
func truncateIn(root *os.Root, rel string) (int64, error) {
	f, err := root.OpenFile(rel, os.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || st.Nlink != 1 {
		return 0, errors.New("not a regular file of one name")
	}
	if err := f.Truncate(0); err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
