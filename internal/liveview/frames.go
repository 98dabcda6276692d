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
// runs on the CDP connection's reader). When f replaces a frame nobody
// took, put gives that frame's ack: the browser keeps only a couple of
// frames unacked, so a skipped frame must be acked all the same or the
// screencast stalls.
func (fs *frames) put(f Frame) (skipped int, ok bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return 0, false
	}
	if fs.seq > 0 && fs.acked < fs.seq && !fs.cur.Still {
		skipped, ok = fs.cur.Ack, true
		fs.acked = fs.seq
	}
	fs.cur = f
	fs.seq++
	close(fs.changed)
	fs.changed = make(chan struct{})
	return skipped, ok
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
			ack = fs.acked < seq && !f.Still
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

// since is the sequence number of the latest frame.
func (fs *frames) since() uint64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.seq
}

// newer waits until there is a frame newer than since, and says whether
// one came before ctx ended (it takes nothing: no ack is due).
func (fs *frames) newer(ctx context.Context, since uint64) bool {
	for {
		fs.mu.Lock()
		if fs.closed || fs.seq > since {
			ok := !fs.closed
			fs.mu.Unlock()
			return ok
		}
		ch := fs.changed
		fs.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}
