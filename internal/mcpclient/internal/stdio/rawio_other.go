//go:build !linux

package stdio

import (
	"io"
	"os"
)

// newRawPipe is f: raw system calls for pipes are used on Linux only.
func newRawPipe(f *os.File) io.ReadWriter { return f }
