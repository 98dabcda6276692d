//go:build !linux

package stdio

import "errors"

// OOMCounter reads how many processes the kernel's OOM killer has ended;
// only Linux has one.
type OOMCounter struct {
	Path    string
	Machine bool
}

// FindOOMCounter finds none off Linux.
func FindOOMCounter() (OOMCounter, error) {
	return OOMCounter{}, errors.New("no OOM kill counter on this system")
}

// Read fails off Linux.
func (c OOMCounter) Read() (int64, error) { return 0, errors.New("no OOM kill counter on this system") }

// ServerOOMScoreAdj is Linux's.
const ServerOOMScoreAdj = 500

func raiseOOMScore(int) error { return nil }
