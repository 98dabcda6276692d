package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// idleGrace is how long the transport waits after the last round trip
// before its idle reader reads stdout: calls that follow each other
// closer than that read for themselves.
const idleGrace = 100 * time.Millisecond

// idleLoop is the idle reader: kicked when a round trip ends with nothing
// in flight, it waits for a quiet spell of idleGrace, then reads until it
// delivered a response, stdout ended or the transport closed.
func (t *Transport) idleLoop() {
	defer close(t.idleDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-t.idleKick:
		}
		t.idleParked.Store(false)
		for gen := t.calls.Load(); ; {
			timer.Reset(idleGrace)
			select {
			case <-t.done:
				return
			case <-timer.C:
			}
			if now := t.calls.Load(); now != gen { // calls go on: wait again
				gen = now
				continue
			}
			break
		}
		eof := false
		select {
		case t.read <- struct{}{}:
			if t.quiet() {
				eof = t.readIdle()
			}
			<-t.read
		default: // a caller reads
		}
		if eof {
			return
		}
		t.idleParked.Store(true)
		if t.quiet() { // a round trip that ended meanwhile found it busy
			t.kickIdle()
		}
	}
}

// quiet reports whether no request is in flight (a stream that waits for
// its end does not count: nobody reads for it).
func (t *Transport) quiet() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) == t.streams && !t.closed
}

// kickIdle wakes the idle reader when it is parked.
func (t *Transport) kickIdle() {
	if t.idleParked.Load() {
		select {
		case t.idleKick <- struct{}{}:
		default:
		}
	}
}

// readIdle reads and dispatches lines, holding the read token, until it
// delivered a response to a caller (it then gives the token back), stdout
// ended (eof: it is left to the exit watcher and the next call) or the
// transport failed.
func (t *Transport) readIdle() (eof bool) {
	t.setReadDeadline(time.Time{}, false)
	for {
		line, err := t.readLine()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.setReadDeadline(time.Time{}, true) // a late wake-up of a caller's
			continue
		case errors.Is(err, io.EOF):
			return true
		case err != nil:
			if !errors.Is(err, ErrTooLarge) {
				err = fmt.Errorf("read from server: %w", err)
			}
			t.fail(err)
			return false
		}
		if t.dispatchIdle(line) {
			return false
		}
	}
}

// dispatchIdle is dispatch for the idle reader: it reports whether the
// line was a response it delivered.
func (t *Transport) dispatchIdle(line []byte) bool {
	m, ok := jsonscan.ScanEnvelope(bytes.TrimSpace(line))
	t.dispatch(line, nil)
	return ok && !m.Method
}
