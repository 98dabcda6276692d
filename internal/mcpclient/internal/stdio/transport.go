package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// Transport speaks JSON-RPC over a child's stdin and stdout, built for
// the bot's call pattern: one call at a time per server, most of the time.
//
// mcp-go's own stdio transport reads stdout on a goroutine of its own and
// hands every response to the waiting caller through a channel. On a
// two-core machine that hand-off (a goroutine wake-up, often on another
// thread) and the transport's double decoding of every line cost more than
// the rest of a call (see mcpclient's BenchmarkCallTool). Here the caller that waits
// for a response reads stdout itself: whoever holds the read token reads
// lines and delivers each to its owner; a caller whose answer arrived
// returns at once, and a caller waiting while another reads takes the token
// over when it is released. When no request has been in flight for
// idleGrace, the transport's own idle reader takes the token and reads what
// the server sends between calls — a ping, a roots/list, a notification —
// so that it is answered now rather than at the next call; it hands the
// token back after the first response it delivers (the call that came
// meanwhile pays one hand-off), and back-to-back calls never meet it. An
// end of stdout it sees is left to the exit watcher and the next call.
//
// The hot path allocates only the copy of the result: requests are encoded
// into a buffer the transport keeps, waiters are reused, and the call
// timeout is the read deadline of stdout rather than a context of its own.
//
// The MCP client uses RoundTrip and Notify directly; the transport.Interface methods
// adapt the same machinery for mcp-go's client.
type Transport struct {
	stdin  *os.File
	stdout *os.File
	r      *bufio.Reader
	logger *slog.Logger
	redact func(string) string
	max    int // the largest message read, in bytes

	wmu  sync.Mutex // serialises writes to stdin and guards wbuf
	wbuf []byte
	// wdMu guards writer and the write deadline: a cancelled caller's
	// wake-up sets it only while that caller writes.
	wdMu   sync.Mutex
	writer *waiter   // the caller whose request is being written; nil for a notification
	wdl    time.Time // the write deadline last set

	read chan struct{} // the read token: a one-slot semaphore

	mu      sync.Mutex
	pending map[int64]*waiter
	streams int       // the pending requests that are streams (Stream): no call waits on them
	free    []*waiter // waiters to reuse
	closed  bool
	done    chan struct{}
	err     error // why the transport closed

	handlers       sync.WaitGroup  // the replies to server requests; Add under mu while open
	handlerCtx     context.Context // ends when the transport closes
	cancelHandlers context.CancelFunc

	// calls counts the round trips started (the idle reader waits for a
	// quiet spell); idleParked says it waits for a kick; idleDone is
	// closed when it has ended.
	calls      atomic.Int64
	idleParked atomic.Bool
	idleKick   chan struct{}
	idleDone   chan struct{}

	notifyMu sync.RWMutex
	onNotify func(mcp.JSONRPCNotification)
	onReq    transport.RequestHandler
	partial  []byte    // a line cut short by a read deadline; owned by the token holder
	rdl      time.Time // the read deadline last set; owned by the token holder
}

var (
	_ transport.Interface              = (*Transport)(nil)
	_ transport.BidirectionalInterface = (*Transport)(nil)
)

// ErrTimeout is what RoundTrip returns when its deadline passed.
var ErrTimeout = errors.New("call timeout")

// ErrTooLarge ends a transport whose server wrote a message over the limit
// (Options.MaxMessageBytes): memory stays bounded by the limit, not by the
// server.
var ErrTooLarge = errors.New("the server wrote a message over the size limit")

// ErrOutputClosed ends a transport whose server closed its stdout: it
// exited, or it keeps running without a way to answer.
var ErrOutputClosed = errors.New("the server closed its output (stdout)")

// ErrInputClosed ends a transport whose server closed its stdin (a write
// found the pipe broken): it exited, most likely.
var ErrInputClosed = errors.New("the server closed its input (stdin)")

// DefaultMaxMessageBytes is the largest message a server may write.
const DefaultMaxMessageBytes = 64 << 20

// phase says what a caller's goroutine does, for its cancellation's
// wake-up: a blocked write or read is woken by a deadline in the past.
const (
	phaseIdle int32 = iota
	phaseWriting
	phaseReading
)

// waiter is one request waiting for its response. The fields below ch are
// guarded by the transport's mu.
type waiter struct {
	// ch gets a signal when another reader delivered the response.
	ch     chan struct{}
	phase  atomic.Int32 // phaseIdle, phaseWriting, phaseReading; set by its caller
	got    bool
	result []byte // a copy: the line's buffer is reused
	errRaw []byte // the error member, copied
}

// Response is the answer to one request: a result or a JSON-RPC error.
type Response struct {
	Result json.RawMessage
	Error  json.RawMessage // non-nil for an error response
}

// Request is an outgoing request: tools/call with raw arguments (the hot
// path, written by hand), or any method with params for encoding/json.
type Request struct {
	ID     int64
	Method string
	Params any             // without Args
	Tool   string          // tools/call: the server's name of the tool
	Args   json.RawMessage // tools/call: the arguments (non-nil selects the hand-written path)
	Meta   json.RawMessage // the 2026-07-28 _meta, or nil
}

func newTransport(stdin, stdout *os.File, logger *slog.Logger, redact func(string) string, max int) *Transport {
	ctx, cancel := context.WithCancel(context.Background())
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	t := &Transport{
		handlerCtx:     ctx,
		cancelHandlers: cancel,
		stdin:          stdin,
		stdout:         stdout,
		r:              bufio.NewReaderSize(stdout, 64<<10),
		logger:         logger,
		redact:         redact,
		max:            max,
		read:           make(chan struct{}, 1),
		pending:        map[int64]*waiter{},
		done:           make(chan struct{}),
		idleKick:       make(chan struct{}, 1),
		idleDone:       make(chan struct{}),
	}
	t.idleParked.Store(true)
	go t.idleLoop() // Close waits for it
	return t
}

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

// RoundTrip writes m and waits for its response until ctx ends, deadline
// passes (ErrTimeout; zero means none) or the transport closes. The write
// honours both too: a server that stops reading its input cannot hold a
// call (or /stop) beyond them.
func (t *Transport) RoundTrip(ctx context.Context, m Request, deadline time.Time) (Response, error) {
	t.mu.Lock()
	if err := t.admitLocked(m.ID); err != nil {
		t.mu.Unlock()
		return Response{}, err
	}
	var w *waiter
	if n := len(t.free); n > 0 {
		w, t.free = t.free[n-1], t.free[:n-1]
	} else {
		w = &waiter{ch: make(chan struct{}, 1)}
	}
	t.pending[m.ID] = w
	t.mu.Unlock()
	t.calls.Add(1)

	if ctx.Done() != nil {
		// One wake-up for the whole call: it ends a blocked write or read
		// of this caller's.
		stop := context.AfterFunc(ctx, func() { t.wake(w) })
		defer stop()
	}
	err := t.writeMessage(ctx, &m, w, deadline)
	if err == nil {
		err = t.await(ctx, w, deadline)
	}

	t.mu.Lock()
	delete(t.pending, m.ID)
	got, r := w.got, Response{Result: w.result, Error: w.errRaw}
	w.got, w.result, w.errRaw = false, nil, nil
	w.phase.Store(phaseIdle)
	select {
	case <-w.ch: // a signal nobody took
	default:
	}
	t.free = append(t.free, w)
	idle := len(t.pending) == t.streams
	t.mu.Unlock()
	if idle {
		t.kickIdle()
	}
	if got {
		return r, nil // an answer that arrived with the deadline still counts
	}
	return Response{}, err
}

// admitLocked refuses a request on a closed transport, or with the id of
// one still waiting. t.mu is held.
func (t *Transport) admitLocked(id int64) error {
	if t.closed {
		return t.closedErr()
	}
	if _, dup := t.pending[id]; dup {
		return fmt.Errorf("request id %d is already waiting", id)
	}
	return nil
}

// Stream writes m, a request whose answer may come much later or never
// (subscriptions/listen: the server's notifications meanwhile are its
// stream), and waits for the answer until ctx ends or the transport
// closes. It does not read: the calls' readers and the idle reader deliver
// its answer and its notifications, and the idle reader counts no call in
// flight while only streams wait. Its write is bounded like a
// notification's.
func (t *Transport) Stream(ctx context.Context, m Request) (Response, error) {
	t.mu.Lock()
	if err := t.admitLocked(m.ID); err != nil {
		t.mu.Unlock()
		return Response{}, err
	}
	w := &waiter{ch: make(chan struct{}, 1)}
	t.pending[m.ID] = w
	t.streams++
	t.mu.Unlock()

	err := t.writeMessage(ctx, &m, nil, time.Now().Add(writeTimeout))
	t.kickIdle() // what follows is read by the idle reader when no call is in flight
	if err == nil {
		select {
		case <-w.ch:
		case <-ctx.Done():
			err = context.Cause(ctx)
		case <-t.done:
			err = t.closedErr()
		}
	}

	t.mu.Lock()
	delete(t.pending, m.ID)
	t.streams--
	got, r := w.got, Response{Result: w.result, Error: w.errRaw}
	t.mu.Unlock()
	if got {
		return r, nil
	}
	return Response{}, err
}

// await waits for w's response, reading stdout while it holds the read
// token. It returns nil once the response is there.
func (t *Transport) await(ctx context.Context, w *waiter, deadline time.Time) error {
	var timer *time.Timer // only while another caller reads
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case t.read <- struct{}{}: // the common case: nobody else is reading
			err := t.readUntil(ctx, w, deadline) // sees a response already delivered
			<-t.read
			return err
		default:
		}
		var expired <-chan time.Time
		if !deadline.IsZero() {
			if timer == nil {
				timer = time.NewTimer(time.Until(deadline))
			}
			expired = timer.C
		}
		select {
		case <-w.ch:
			return nil
		case t.read <- struct{}{}: // the reader left: take over
			err := t.readUntil(ctx, w, deadline)
			<-t.read
			return err
		case <-t.done:
			select {
			case <-w.ch:
				return nil
			default:
			}
			return t.closedErr()
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-expired:
			return ErrTimeout
		}
	}
}

// wake ends w's blocked write or read: its context ended. A wake-up that
// comes late, when w no longer reads, may cut another caller's read short;
// that reader sets its own deadline again and reads on.
func (t *Transport) wake(w *waiter) {
	switch w.phase.Load() {
	case phaseWriting:
		t.wdMu.Lock()
		if t.writer == w {
			t.wdl = time.Unix(1, 0)
			_ = t.stdin.SetWriteDeadline(t.wdl)
		}
		t.wdMu.Unlock()
	case phaseReading:
		_ = t.stdout.SetReadDeadline(time.Unix(1, 0))
	}
}

// readUntil reads and dispatches lines until w has its response, ctx ends,
// deadline passes or stdout fails. It holds the read token.
func (t *Transport) readUntil(ctx context.Context, w *waiter, deadline time.Time) error {
	t.setReadDeadline(deadline, false)
	w.phase.Store(phaseReading)
	defer w.phase.Store(phaseIdle)
	if ctx.Err() != nil { // cancelled before it read: no wake-up will come
		return context.Cause(ctx)
	}
	for {
		select {
		case <-w.ch:
			return nil
		default:
		}
		line, err := t.readLine()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			switch {
			case ctx.Err() != nil:
				return context.Cause(ctx)
			case !deadline.IsZero() && !time.Now().Before(deadline):
				return ErrTimeout
			}
			// An earlier deadline kept by setReadDeadline, or another
			// caller's cancellation fired late: not ours.
			t.setReadDeadline(deadline, true)
			continue
		}
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				err = ErrOutputClosed
			case !errors.Is(err, ErrTooLarge):
				err = fmt.Errorf("read from server: %w", err)
			}
			t.fail(err)
			return t.closedErr()
		}
		if t.dispatch(line, w) {
			return nil
		}
	}
}

// The transport.Interface adapter: mcp-go's client can drive the same
// machinery (TestTransportDrivesMCPGoClient).

// Start is a no-op: the process is started by Start (the package's).
func (t *Transport) Start(context.Context) error { return nil }

func (t *Transport) GetSessionId() string { return "" }

func (t *Transport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.notifyMu.Lock()
	t.onNotify = h
	t.notifyMu.Unlock()
}

func (t *Transport) SetRequestHandler(h transport.RequestHandler) {
	t.notifyMu.Lock()
	t.onReq = h
	t.notifyMu.Unlock()
}

// SendRequest writes req and waits for its response until ctx ends or the
// transport closes. The request's id must be an int64.
func (t *Transport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	id, ok := req.ID.Value().(int64)
	if !ok {
		return nil, fmt.Errorf("request id %v is not an int64", req.ID)
	}
	r, err := t.RoundTrip(ctx, Request{ID: id, Method: req.Method, Params: req.Params}, time.Time{})
	if err != nil {
		return nil, err
	}
	resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: r.Result}
	if r.Error != nil {
		var e mcp.JSONRPCErrorDetails
		if err := json.Unmarshal(r.Error, &e); err != nil {
			e = mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "undecodable error: " + string(r.Error)}
		}
		resp.Error, resp.Result = &e, nil
	}
	return resp, nil
}

// SendNotification writes a notification.
func (t *Transport) SendNotification(_ context.Context, n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return t.writeLine(b)
}

// deadlineSlack is how much earlier than asked the read deadline may be:
// setting a deadline costs a runtime timer update, so back-to-back calls
// keep the one set up to this much before, and a read it interrupts early
// simply sets the right one and reads on.
const deadlineSlack = time.Second

// setReadDeadline makes d (zero: none) the deadline of stdout's reads, or
// keeps the current one when it is at most deadlineSlack earlier and not
// past. force always sets it. It is called by the token holder.
func (t *Transport) setReadDeadline(d time.Time, force bool) {
	if !force && !d.IsZero() && !t.rdl.IsZero() && !t.rdl.After(d) && d.Sub(t.rdl) < deadlineSlack &&
		time.Now().Before(t.rdl) {
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
		n, err = t.stdin.Write(b[written:])
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
	if !force && !d.IsZero() && !t.wdl.IsZero() && !t.wdl.After(d) && d.Sub(t.wdl) < deadlineSlack &&
		time.Now().Before(t.wdl) {
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

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// fail closes the transport for good with err.
func (t *Transport) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	t.err = err
	close(t.done)
}

func (t *Transport) closedErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return fmt.Errorf("%w: %v", transport.ErrTransportClosed, t.err)
	}
	return transport.ErrTransportClosed
}

// Err is why the transport failed (nil while it works, or when Close ended
// it): the server closed its output, wrote a message over the limit,
// stopped reading.
func (t *Transport) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if errors.Is(t.err, errClosed) {
		return nil
	}
	return t.err
}

// errClosed is the reason of a transport its owner closed.
var errClosed = errors.New("closed")

// Close closes stdin and stdout, wakes every waiter, and cancels and waits
// for the handlers of server requests. It does not touch the process: its
// owner stops it.
func (t *Transport) Close() error {
	t.fail(errClosed)
	t.cancelHandlers()
	err := t.stdin.Close()
	_ = t.stdout.Close() // ends the idle reader's read
	t.handlers.Wait()
	<-t.idleDone
	return err
}
