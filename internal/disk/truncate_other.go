//go:build !unix

package disk

import (
	"errors"
	"os"
)

// truncateIn is not done here: pruning removes the file instead.
func truncateIn(*os.Root, string) (int64, error) {
	return 0, errors.New("emptying a file in place is not supported on this system")
}
