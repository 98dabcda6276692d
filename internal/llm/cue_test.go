package llm_test

import (
	"context"
	"sync"
	"time"
)

// cueDeadline is a context whose deadline passes when the test says so:
// once the server has the request. A deadline set on the clock before
// the call did not always let the request get there on a loaded machine
// under -race (50 ms, then 1 s, failed).
type cueDeadline struct {
	context.Context // the parent, for its values
	done            chan struct{}
	once            sync.Once
}

// withCueDeadline is parent with a deadline that passes when expire is
// called.
func withCueDeadline(parent context.Context) (ctx context.Context, expire func()) {
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
