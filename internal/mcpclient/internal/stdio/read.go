package stdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// deadlineSlack is how much earlier than asked the read deadline may be:
// setting a deadline costs a runtime timer update, so back-to-back calls
// keep the one set up to this much before, and a read it interrupts early
// simply sets the right one and reads on.
const deadlineSlack = time.Second

// setReadDeadline makes d (zero: none) the deadline of stdout's reads, or
// keeps the current one when it is at most deadlineSlack earlier. force
// always sets it. It is called by the token holder. A kept deadline that
// has passed (calls further apart than their timeout) ends the next read
// at once, and the reader sets d then (force): cheaper than reading the
// clock on every call.
func (t *Transport) setReadDeadline(d time.Time, force bool) {
	if !force && !d.IsZero() && !t.rdl.IsZero() && !t.rdl.After(d) && d.Sub(t.rdl) < deadlineSlack {
		return
	}
	t.rdl = d
	_ = t.stdout.SetReadDeadline(d)
}

// readLine reads one line, keeping what a read deadline cut short for the
// next reader. A line over the limit is ErrTooLarge: the transport cannot
// go on after it.
func (t *Transport) readLine() ([]byte, error) {
	for {
		b, err := t.r.ReadSlice('\n')
		if len(t.partial)+len(b) > t.max {
			t.partial = nil
			return nil, fmt.Errorf("%w of %d MB", ErrTooLarge, t.max>>20)
		}
		if err == nil {
			if len(t.partial) > 0 {
				line := append(t.partial, b...)
				t.partial = nil
				return line, nil
			}
			return b, nil
		}
		if len(b) > 0 {
			t.partial = append(t.partial, b...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// dispatch hands one line to whom it concerns. A response goes to its
// waiter: self (the reader's own waiter) is told by the return value, any
// other by its channel.
func (t *Transport) dispatch(line []byte, self *waiter) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	m, ok := jsonscan.ScanEnvelope(line)
	if !ok {
		t.logger.Debug("MCP server wrote a line that is not JSON-RPC", "line", t.excerpt(line))
		return false
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method && !hasID:
		t.notify(line)
		return false
	case m.Method:
		t.serverRequest(line)
		return false
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return false // not one of ours: our ids are integers
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.pending[id]
	if w == nil || w.got {
		return false // its caller gave up, or a duplicate
	}
	w.got = true
	if len(m.Error) > 0 && string(m.Error) != "null" {
		w.errRaw = append([]byte(nil), m.Error...)
	} else {
		w.result = append([]byte(nil), m.Result...)
	}
	if w == self {
		return true
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
	return false
}

func (t *Transport) notify(line []byte) {
	t.notifyMu.RLock()
	h := t.onNotify
	t.notifyMu.RUnlock()
	if h == nil {
		return
	}
	var n mcp.JSONRPCNotification
	if err := json.Unmarshal(line, &n); err == nil {
		h(n)
	}
}

// serverRequest answers a request from the server (ping, or what a
// handler supports) on a goroutine of its own, so that the reader goes on;
// Close cancels the handlers and waits for them.
func (t *Transport) serverRequest(line []byte) {
	var req transport.JSONRPCRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return
	}
	t.notifyMu.RLock()
	h := t.onReq
	t.notifyMu.RUnlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.handlers.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.handlers.Done()
		var resp *transport.JSONRPCResponse
		switch {
		case req.Method == string(mcp.MethodPing):
			resp = transport.NewJSONRPCResultResponse(req.ID, json.RawMessage("{}"))
		case h != nil:
			r, err := h(t.handlerCtx, req)
			if err != nil {
				r = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
			}
			resp = r
		default:
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "method not supported by this client", nil)
		}
		if resp == nil {
			return
		}
		if b, err := json.Marshal(resp); err == nil {
			_ = t.writeLine(b)
		}
	}()
}

// excerpt is the start of a line for the log, redacted before it is cut
// (cut first, the end of a secret would no longer be recognised).
func (t *Transport) excerpt(line []byte) string {
	s := string(line[:min(len(line), 4096)])
	if t.redact != nil {
		s = t.redact(s)
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
