package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
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
// On Linux stdin and stdout are written and read with raw system calls
// (rawio_linux.go): os.File's tell the runtime of every read and write,
// and that woke the runtime's monitor thread about every other call.
//
// The MCP client uses RoundTrip and Notify directly; the transport.Interface methods
// adapt the same machinery for mcp-go's client.
type Transport struct {
	stdin  *os.File
	stdout *os.File
	r      *bufio.Reader
	in     io.Writer // stdin, written with raw system calls on Linux (rawio_linux.go)
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
		r:              bufio.NewReaderSize(newRawPipe(stdout), 64<<10),
		in:             newRawPipe(stdin),
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
