package liveview

import (
	"context"
	"sync"
)

// frames is the latest frame of a tab and the readers waiting for a newer
// one. Only the latest is kept: a slow phone skips frames rather than
// queue them, and the browser sends the next only after the frame before
// was taken (take acks it), so an idle page or an absent reader costs
// nothing.
type frames struct {
	mu      sync.Mutex
	cur     Frame
	seq     uint64
	acked   uint64 // the seq of the last frame whose ack was handed out
	changed chan struct{}
	closed  bool
}

func newFrames() *frames { return &frames{changed: make(chan struct{})} }

// put makes f the latest frame and wakes the readers. It never blocks (it
// runs on the CDP connection's reader).
func (fs *frames) put(f Frame) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return
	}
	fs.cur = f
	fs.seq++
	close(fs.changed)
	fs.changed = make(chan struct{})
}

// close wakes the readers for good.
func (fs *frames) close() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.closed {
		fs.closed = true
		close(fs.changed)
	}
}

// next waits for a frame newer than after, until ctx ends or the frames
// close. ack says whether the caller must ack it (the first reader of a
// frame does).
func (fs *frames) next(ctx context.Context, after uint64) (f Frame, seq uint64, ack bool, ok bool) {
	for {
		fs.mu.Lock()
		if fs.closed {
			fs.mu.Unlock()
			return Frame{}, 0, false, false
		}
		if fs.seq > after {
			f, seq = fs.cur, fs.seq
			ack = fs.acked < seq
			fs.acked = seq
			fs.mu.Unlock()
			return f, seq, ack, true
		}
		ch := fs.changed
		fs.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Frame{}, 0, false, false
		}
	}
}

// latest is the newest frame (zero before the first).
func (fs *frames) latest() Frame {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.cur
}
