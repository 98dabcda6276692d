//go:build unix

package session

import "syscall"

// diskFree is the room an unprivileged writer has left on the file
// system of dir (statfs's available blocks).
func diskFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil //nolint:unconvert // the field types differ by system
}
