package liveview

import (
	"sync"
	"time"
)

// limiter is a token bucket per key (a session, a client address), in a
// table of bounded size: at maxKeys it forgets every bucket, which at
// worst lets a burst through once more. A dozen lines, so no dependency
// (golang.org/x/time/rate would give the same bucket and still need the
// bounded table around it), and it takes the server's clock, so tests
// drive it without sleeping.
type limiter struct {
	mu      sync.Mutex
	rate    float64 // tokens a second
	burst   float64
	maxKeys int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(perSecond, burst float64, maxKeys int) *limiter {
	return &limiter{rate: perSecond, burst: burst, maxKeys: maxKeys, buckets: map[string]*bucket{}}
}

// allow takes a token of key's bucket at now, if it has one.
func (l *limiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			clear(l.buckets)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
