package testkit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSyncBufferTakesConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&b, "%d", i%2) })
	}
	wg.Wait()
	if n := len(b.String()); n != 8 {
		t.Errorf("%d bytes written, want 8", n)
	}
}

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	c.Advance(90 * time.Second)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Errorf("after Advance: %v", got)
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Errorf("after Set: %v", got)
	}
}
