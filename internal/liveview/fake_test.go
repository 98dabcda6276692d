package liveview

import (
	"context"
	"fmt"
	"image"
	"sync"
)

// fakeTab is a Target that records what it is asked and sends a frame
// when the screencast starts and after each input.
type fakeTab struct {
	mu      sync.Mutex
	calls   []string
	onFrame func(Frame)
	acks    []int
	closed  bool
	url     string
	n       int
	silent  bool // inputs send no frame (Chromium's screencast now and then)
}

var _ Target = (*fakeTab)(nil)

func (f *fakeTab) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	on := f.onFrame
	if f.silent && s != "screencast" {
		on = nil
	}
	f.n++
	n := f.n
	f.mu.Unlock()
	if on != nil {
		on(Frame{JPEG: []byte(fmt.Sprintf("jpeg %d", n)), Size: image.Pt(400, 800), Ack: n})
	}
}

func (f *fakeTab) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeTab) StartScreencast(_ context.Context, _ ScreencastOptions, on func(Frame)) error {
	f.mu.Lock()
	f.onFrame = on
	f.mu.Unlock()
	f.record("screencast")
	return nil
}
func (f *fakeTab) AckFrame(_ context.Context, ack int) error {
	f.mu.Lock()
	f.acks = append(f.acks, ack)
	f.mu.Unlock()
	return nil
}
func (f *fakeTab) StopScreencast(context.Context) error {
	f.mu.Lock()
	f.onFrame = nil
	f.mu.Unlock()
	return nil
}
func (f *fakeTab) Tap(_ context.Context, x, y float64) error {
	f.record(fmt.Sprintf("tap %.0f,%.0f", x, y))
	return nil
}
func (f *fakeTab) Touch(_ context.Context, x, y float64) error {
	f.record(fmt.Sprintf("touch %.0f,%.0f", x, y))
	return nil
}
func (f *fakeTab) Scroll(_ context.Context, x, y, dx, dy float64) error {
	f.record(fmt.Sprintf("scroll %.0f,%.0f by %.0f,%.0f", x, y, dx, dy))
	return nil
}
func (f *fakeTab) InsertText(_ context.Context, text string) error {
	f.record("text " + text)
	return nil
}
func (f *fakeTab) Key(_ context.Context, key string) error {
	f.record("key " + key)
	return nil
}
func (f *fakeTab) Back(context.Context) error {
	f.record("back")
	return nil
}
func (f *fakeTab) Screenshot(context.Context) (Frame, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	return Frame{JPEG: []byte(fmt.Sprintf("still %d", n)), Size: image.Pt(400, 800), Still: true}, nil
}
func (f *fakeTab) CurrentURL(context.Context) (string, error) { return f.url, nil }
func (f *fakeTab) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeTab) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
