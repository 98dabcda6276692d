//go:build !unix

package session

import "errors"

// diskFree is unknown here: a streamed file is taken whatever the room.
func diskFree(string) (int64, error) {
	return 0, errors.New("the room left on the disk is not known on this system")
}
