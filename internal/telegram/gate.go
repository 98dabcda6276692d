package telegram

import (
	"sync"
	"time"
)

// window admits at most n calls per period: a call holds its slot from
// its start until period after it ended.
type window struct {
	n        int
	period   time.Duration
	inflight int
	frees    []time.Time // when the slots of ended calls free, in order
}

func (w *window) prune(now time.Time) {
	i := 0
	for i < len(w.frees) && !w.frees[i].After(now) {
		i++
	}
	if i > 0 {
		w.frees = append(w.frees[:0], w.frees[i:]...)
	}
}

// readyAt reports whether a slot is free now, and otherwise when one
// frees (zero when only a call in flight can free one).
func (w *window) readyAt(now time.Time) (time.Time, bool) {
	w.prune(now)
	used := w.inflight + len(w.frees)
	if used < w.n {
		return now, true
	}
	if k := used - w.n; k < len(w.frees) {
		return w.frees[k], false
	}
	return time.Time{}, false
}

func (w *window) start() { w.inflight++ }

func (w *window) finish(end time.Time) {
	w.inflight--
	w.frees = append(w.frees, end.Add(w.period))
}

// gate is the limit shared by every chat: a window whose slots are handed
// out in the order they were asked for, so a busy chat cannot starve the
// others.
type gate struct {
	mu     sync.Mutex
	w      window
	queue  []*ticket
	timer  *time.Timer
	closed bool
}

// ticket is a chat worker's place in the gate's queue; ready is closed
// once the slot is its.
type ticket struct {
	ready   chan struct{}
	granted bool // guarded by gate.mu
}

func (t *ticket) isGranted() bool {
	select {
	case <-t.ready:
		return true
	default:
		return false
	}
}

func newGate(n int, period time.Duration) *gate {
	return &gate{w: window{n: n, period: period}}
}

// request queues a ticket, granted at once when a slot is free and nobody
// is ahead.
func (g *gate) request() *ticket {
	t := &ticket{ready: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, t)
	g.grantLocked()
	return t
}

// cancel gives up t: out of the queue, or its unused slot back.
func (g *gate) cancel(t *ticket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.granted {
		g.w.inflight--
	} else {
		for i, q := range g.queue {
			if q == t {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
	}
	g.grantLocked()
}

// finish ends a granted call at end.
func (g *gate) finish(end time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.w.finish(end)
	g.grantLocked()
}

func (g *gate) grantLocked() {
	now := time.Now()
	for len(g.queue) > 0 {
		at, ok := g.w.readyAt(now)
		if !ok {
			if !at.IsZero() && !g.closed {
				d := at.Sub(now)
				if g.timer == nil {
					g.timer = time.AfterFunc(d, g.tick)
				} else {
					g.timer.Reset(d)
				}
			}
			return
		}
		t := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		g.w.start()
		t.granted = true
		close(t.ready)
	}
}

func (g *gate) tick() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grantLocked()
}

// stop ends the gate's timer (after every worker ended).
func (g *gate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
	}
}
