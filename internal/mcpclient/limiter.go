package mcpclient

import (
	"context"
	"sync"
	"time"
)

// limiter is a server's ceiling of live processes across every chat
// (maxLive; the browser preset's PLAYWRIGHT_MAX_BROWSERS). A connection
// takes a slot before it starts a process and gives it back when that
// process is gone. When the slots are full, the least recently used idle
// process (no call in flight, not held by its chat's running turn) is
// stopped for the newcomer; when none is idle, the newcomer waits in a
// FIFO queue until a slot frees, a holder goes idle, a turn ends or a
// turn's hold lapses (see connection.heldUntil). No call fails because of
// the ceiling: it waits, as long as its context lets it (/stop leaves the
// queue).
type limiter struct {
	limit int

	mu      sync.Mutex
	holders map[*connection]*slot
	queue   []*slotWaiter // FIFO; the first one takes the next slot
}

// slot is one live process's place under the ceiling.
type slot struct{}

type slotWaiter struct {
	c    *connection
	wake chan struct{} // one-slot: something changed, look again
}

func newLimiter(limit int) *limiter {
	return &limiter{limit: limit, holders: map[*connection]*slot{}}
}

// take returns a slot for c, stopping the least recently used idle process
// of another chat or waiting in the queue when the ceiling is reached.
// queued is called once, with the number of chats ahead, when c has to
// wait.
func (l *limiter) take(ctx context.Context, c *connection, queued func(ahead int)) (*slot, error) {
	var me *slotWaiter
	told := false
	for {
		l.mu.Lock()
		first := len(l.queue) == 0 || l.queue[0] == me
		if first && len(l.holders) < l.limit {
			s := &slot{}
			l.holders[c] = s
			l.dequeueLocked(me)
			l.mu.Unlock()
			return s, nil
		}
		var victim *connection
		var lapseIn time.Duration // until a held holder may be stopped, if none is idle now (0: none held)
		if first {
			now := c.deps.holdClock()
			var lapse time.Time
			if victim, lapse = l.idlestLocked(c, now); !lapse.IsZero() {
				lapseIn = max(lapse.Sub(now), time.Millisecond)
			}
		}
		if me == nil {
			me = &slotWaiter{c: c, wake: make(chan struct{}, 1)}
			l.queue = append(l.queue, me)
		}
		ahead := l.positionLocked(me)
		l.mu.Unlock()

		if victim != nil && victim.evict() {
			continue // its slot is free: take it
		}
		// None idle (or it became busy meanwhile): wait for a slot to free
		// or a holder to go idle.
		if !told && queued != nil {
			told = true
			queued(ahead)
		}
		if err := l.wait(ctx, me, lapseIn); err != nil {
			return nil, err
		}
	}
}

// wait waits until me is woken, lapseIn (if not zero: a hold lapses then)
// passes, or ctx ends: then me leaves the queue.
func (l *limiter) wait(ctx context.Context, me *slotWaiter, lapseIn time.Duration) error {
	var lapsed <-chan time.Time
	if lapseIn > 0 {
		t := time.NewTimer(lapseIn)
		defer t.Stop()
		lapsed = t.C
	}
	select {
	case <-me.wake:
	case <-lapsed:
	case <-ctx.Done():
		l.mu.Lock()
		l.dequeueLocked(me)
		l.wakeFirstLocked()
		l.mu.Unlock()
		return context.Cause(ctx)
	}
	return nil
}

// tryTake returns a slot for c if one is free now and nobody waits for
// one (a prewarm: it neither waits nor stops another chat's process).
func (l *limiter) tryTake(c *connection) (*slot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) > 0 || len(l.holders) >= l.limit {
		return nil, false
	}
	s := &slot{}
	l.holders[c] = s
	return s, true
}

// release gives s back (s may have been released already: a stop and a
// crash can both end one process); the first waiter looks again.
func (l *limiter) release(c *connection, s *slot) {
	if s == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holders[c] != s {
		return
	}
	delete(l.holders, c)
	l.wakeFirstLocked()
}

// idle tells the first waiter that a holder has nothing in flight: it may
// stop it.
func (l *limiter) idle() {
	l.mu.Lock()
	l.wakeFirstLocked()
	l.mu.Unlock()
}

// idlestLocked is the holder other than c with nothing in flight and not
// held by a running turn that was used least recently, or nil; and then,
// when a holder is held, the earliest time its hold lapses (zero: none
// is).
func (l *limiter) idlestLocked(c *connection, now time.Time) (*connection, time.Time) {
	var best *connection
	var bestUsed int64
	var lapse time.Time
	for h := range l.holders {
		if h == c || h.use.busyNow() {
			continue
		}
		if until := h.heldUntil(now); !until.IsZero() {
			if lapse.IsZero() || until.Before(lapse) {
				lapse = until
			}
			continue
		}
		if used := h.use.last(); best == nil || used < bestUsed {
			best, bestUsed = h, used
		}
	}
	if best != nil {
		lapse = time.Time{}
	}
	return best, lapse
}

func (l *limiter) positionLocked(me *slotWaiter) int {
	for i, w := range l.queue {
		if w == me {
			return i
		}
	}
	return len(l.queue)
}

func (l *limiter) dequeueLocked(me *slotWaiter) {
	for i, w := range l.queue {
		if w == me {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return
		}
	}
}

func (l *limiter) wakeFirstLocked() {
	if len(l.queue) == 0 {
		return
	}
	select {
	case l.queue[0].wake <- struct{}{}:
	default:
	}
}

// usage is the number of live processes (slots held) and of chats
// waiting.
func (l *limiter) usage() (live, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.holders), len(l.queue)
}
