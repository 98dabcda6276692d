package testkit

import (
	"context"
	"sync"
	"time"
)

// cueDeadline is a context whose deadline passes when the test says so.
type cueDeadline struct {
	context.Context // the parent, for its values
	done            chan struct{}
	once            sync.Once
}

// DeadlineOnCue is parent with a deadline that passes when expire is
// called: its Done closes and its Err is context.DeadlineExceeded, as if
// the clock had run out. A test of what a deadline does expires it once
// the call has got where the deadline must find it (the server has the
// request): a deadline set on the clock beforehand could pass before, on
// a loaded machine. The parent's own end is not followed.
func DeadlineOnCue(parent context.Context) (ctx context.Context, expire func()) {
	c := &cueDeadline{Context: parent, done: make(chan struct{})}
	return c, func() { c.once.Do(func() { close(c.done) }) }
}

func (c *cueDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *cueDeadline) Done() <-chan struct{}       { return c.done }

func (c *cueDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
