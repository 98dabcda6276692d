package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// writeMessage encodes m into the transport's buffer and writes it for w,
// by deadline (zero: none) and until ctx ends.
func (t *Transport) writeMessage(ctx context.Context, m *Request, w *waiter, deadline time.Time) error {
	if t.isClosed() {
		return t.closedErr()
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	b, err := appendRequest(t.wbuf[:0], m)
	if err != nil {
		return err
	}
	if cap(b) <= 64<<10 {
		t.wbuf = b // keep ordinary buffers, not a huge one
	}
	return t.writeLocked(ctx, b, w, deadline)
}

// writeLine writes one encoded message (a notification, a reply) and its
// newline, within writeTimeout.
func (t *Transport) writeLine(b []byte) error {
	if t.isClosed() {
		return t.closedErr()
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.writeLocked(context.Background(), append(b, '\n'), nil, time.Now().Add(writeTimeout))
}

// writeTimeout bounds a write that belongs to no call (a notification, the
// reply to a server's request).
const writeTimeout = time.Second

// writeLocked writes b by deadline (zero: none), ending when ctx does (w's
// wake-up sets the write deadline in the past). A write that did not
// finish leaves a partial message on the pipe, or a server that does not
// read: either way the transport is done for, and fails — except for a
// cancellation before anything was written. t.wmu is held.
func (t *Transport) writeLocked(ctx context.Context, b []byte, w *waiter, deadline time.Time) error {
	t.wdMu.Lock()
	t.writer = w
	t.setWriteDeadlineLocked(deadline, false)
	t.wdMu.Unlock()
	if w != nil {
		w.phase.Store(phaseWriting)
	}
	written := 0
	var err error
	for ctx.Err() == nil { // a cancellation before the phase was set woke nobody
		var n int
		n, err = t.in.Write(b[written:])
		written += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil ||
			(!deadline.IsZero() && !time.Now().Before(deadline)) {
			break
		}
		if written == len(b) {
			break
		}
		// A deadline kept from an earlier write fired first: set ours.
		t.wdMu.Lock()
		t.setWriteDeadlineLocked(deadline, true)
		t.wdMu.Unlock()
	}
	if w != nil {
		w.phase.Store(phaseIdle)
	}
	t.wdMu.Lock()
	t.writer = nil
	t.wdMu.Unlock()
	switch {
	case err == nil && written == len(b):
		return nil
	case ctx.Err() != nil:
		if written > 0 {
			t.fail(errors.New("a write to the server was cut short"))
		}
		return context.Cause(ctx)
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.fail(errors.New("the server stopped reading its input"))
		return ErrTimeout
	}
	if errors.Is(err, syscall.EPIPE) {
		err = ErrInputClosed
	} else {
		err = fmt.Errorf("write to server: %w", err)
	}
	t.fail(err)
	return err
}

// setWriteDeadlineLocked is setReadDeadline for stdin's writes: the one set
// up to deadlineSlack before d is kept (a write it interrupts sets the
// right one and goes on). t.wdMu is held.
func (t *Transport) setWriteDeadlineLocked(d time.Time, force bool) {
	if !force && !d.IsZero() && !t.wdl.IsZero() && !t.wdl.After(d) && d.Sub(t.wdl) < deadlineSlack {
		return
	}
	if !force && d.IsZero() && t.wdl.IsZero() {
		return
	}
	t.wdl = d
	_ = t.stdin.SetWriteDeadline(d)
}

// Notify writes a notification.
func (t *Transport) Notify(method string, params any) error {
	n := struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, method, params}
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return t.writeLine(b)
}
