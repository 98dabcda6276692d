package testkit

import (
	"sync"
	"time"
)

// Clock is a settable time for code that takes a Now function; safe for
// concurrent use. Timers and tickers are testing/synctest's, not its.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
