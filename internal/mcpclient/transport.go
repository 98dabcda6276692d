package mcpclient

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
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// stdioTransport is mcp-go's transport.Interface over a child's stdin and
// stdout, built for the bot's call pattern: one call at a time per server,
// most of the time.
//
// mcp-go's own stdio transport reads stdout on a goroutine of its own and
// hands every response to the waiting caller through a channel. On a
// two-core machine that hand-off (a goroutine wake-up, often on another
// thread) and the transport's double decoding of every line cost more than
// the rest of a call (see BenchmarkCallTool). Here the caller that waits
// for a response reads stdout itself: whoever holds the read token reads
// lines and delivers each to its owner; a caller whose answer arrived
// returns at once, and a caller waiting while another reads takes the token
// over when it is released. Nobody reads while no request is in flight: a
// notification the server sends in between waits in the pipe until the next
// call (the bot ignores notifications, and the process's exit is seen by the
// exit watcher, not by EOF).
type stdioTransport struct {
	stdin  io.WriteCloser
	stdout *os.File
	r      *bufio.Reader
	logger *slog.Logger

	wmu sync.Mutex // serialises writes to stdin

	read chan struct{} // the read token: a one-slot semaphore

	mu       sync.Mutex
	pending  map[int64]chan *transport.JSONRPCResponse
	released chan struct{} // closed and replaced each time the token is released
	closed   bool
	done     chan struct{}
	err      error // why the transport closed

	notifyMu sync.RWMutex
	onNotify func(mcp.JSONRPCNotification)
	onReq    transport.RequestHandler
	partial  []byte // a line cut short by a read deadline; owned by the token holder
}

var (
	_ transport.Interface              = (*stdioTransport)(nil)
	_ transport.BidirectionalInterface = (*stdioTransport)(nil)
)

func newStdioTransport(stdin io.WriteCloser, stdout *os.File, logger *slog.Logger) *stdioTransport {
	return &stdioTransport{
		stdin:    stdin,
		stdout:   stdout,
		r:        bufio.NewReaderSize(stdout, 64<<10),
		logger:   logger,
		read:     make(chan struct{}, 1),
		pending:  map[int64]chan *transport.JSONRPCResponse{},
		released: make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// Start is a no-op: the process is started by its owner.
func (t *stdioTransport) Start(context.Context) error { return nil }

func (t *stdioTransport) GetSessionId() string { return "" }

func (t *stdioTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.notifyMu.Lock()
	t.onNotify = h
	t.notifyMu.Unlock()
}

func (t *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	t.notifyMu.Lock()
	t.onReq = h
	t.notifyMu.Unlock()
}

// SendRequest writes request and reads stdout until its response arrives,
// ctx ends or the transport closes. The request's id must be an int64.
func (t *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	id, ok := req.ID.Value().(int64)
	if !ok {
		return nil, fmt.Errorf("request id %v is not an int64", req.ID)
	}
	line, err := encodeRequest(req)
	if err != nil {
		return nil, err
	}
	ch := make(chan *transport.JSONRPCResponse, 1)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, t.closedErr()
	}
	t.pending[id] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, id)
		t.mu.Unlock()
	}()
	if err := t.write(line); err != nil {
		return nil, err
	}
	return t.await(ctx, ch)
}

// await waits for ch, reading stdout while it holds the read token.
func (t *stdioTransport) await(ctx context.Context, ch chan *transport.JSONRPCResponse) (*transport.JSONRPCResponse, error) {
	for {
		select {
		case resp := <-ch:
			return resp, nil
		case t.read <- struct{}{}: // the common case: nobody else is reading
			resp, err := t.readUntil(ctx, ch)
			t.release()
			if resp != nil || err != nil {
				return resp, err
			}
			continue
		default:
		}
		t.mu.Lock()
		released := t.released
		t.mu.Unlock()
		select {
		case resp := <-ch:
			return resp, nil
		case t.read <- struct{}{}:
			resp, err := t.readUntil(ctx, ch)
			t.release()
			if resp != nil || err != nil {
				return resp, err
			}
		case <-released: // the reader changed: try to take over
		case <-t.done:
			select {
			case resp := <-ch:
				return resp, nil
			default:
			}
			return nil, t.closedErr()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release gives the read token back and wakes the waiters.
func (t *stdioTransport) release() {
	t.mu.Lock()
	close(t.released)
	t.released = make(chan struct{})
	t.mu.Unlock()
	<-t.read
}

// readUntil reads and dispatches lines until ch has its response, ctx ends
// or stdout fails. It holds the read token.
func (t *stdioTransport) readUntil(ctx context.Context, ch chan *transport.JSONRPCResponse) (*transport.JSONRPCResponse, error) {
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			_ = t.stdout.SetReadDeadline(time.Unix(1, 0)) // wake the blocked read
		})
	}
	defer func() {
		if stop != nil && !stop() {
			_ = t.stdout.SetReadDeadline(time.Time{})
		}
	}()
	for {
		select {
		case resp := <-ch:
			return resp, nil
		default:
		}
		line, err := t.readLine()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// Another caller's cancellation fired late: not ours.
			_ = t.stdout.SetReadDeadline(time.Time{})
			continue
		}
		if err != nil {
			t.fail(fmt.Errorf("read from server: %w", err))
			return nil, t.closedErr()
		}
		t.dispatch(line)
	}
}

// readLine reads one line, keeping what a read deadline cut short for the
// next reader.
func (t *stdioTransport) readLine() ([]byte, error) {
	for {
		b, err := t.r.ReadSlice('\n')
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

// envelope is the top level of one incoming message, found by a scan that
// decodes nothing: the result stays raw for the mapper, which decodes it
// once.
type envelope struct {
	id       []byte // raw
	method   bool
	result   []byte
	errorRaw []byte
}

// scanEnvelope reads the top-level members of a JSON-RPC message. ok is
// false when line is not a valid JSON object.
func scanEnvelope(line []byte) (e envelope, ok bool) {
	if !json.Valid(line) {
		return e, false
	}
	i := skipJSONSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return e, false
	}
	i = skipJSONSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return e, true
	}
	for i < len(line) {
		keyEnd := skipJSONString(line, i)
		key := line[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 { // an escaped key: unescape it
			var k string
			if json.Unmarshal(line[i:keyEnd], &k) != nil {
				return e, false
			}
			key = []byte(k)
		}
		i = skipJSONSpace(line, keyEnd) // at ':'
		val := skipJSONSpace(line, i+1) // the value
		end := skipJSONValue(line, val)
		switch string(key) {
		case "id":
			e.id = line[val:end]
		case "method":
			e.method = true
		case "result":
			e.result = line[val:end]
		case "error":
			e.errorRaw = line[val:end]
		}
		i = skipJSONSpace(line, end)
		if i >= len(line) || line[i] == '}' {
			return e, true
		}
		i = skipJSONSpace(line, i+1) // past ','
	}
	return e, true
}

func (t *stdioTransport) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	m, ok := scanEnvelope(line)
	if !ok {
		t.logger.Debug("MCP server wrote a line that is not JSON-RPC", "line", string(line[:min(len(line), 200)]))
		return
	}
	hasID := len(m.id) > 0 && string(m.id) != "null"
	switch {
	case m.method && !hasID:
		t.notify(line)
	case m.method:
		t.serverRequest(line)
	default:
		id, err := strconv.ParseInt(string(m.id), 10, 64)
		if err != nil {
			return // not one of ours: our ids are integers
		}
		t.mu.Lock()
		ch := t.pending[id]
		t.mu.Unlock()
		if ch == nil {
			return // its caller gave up
		}
		resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id)}
		if len(m.errorRaw) > 0 && string(m.errorRaw) != "null" {
			var e mcp.JSONRPCErrorDetails
			if err := json.Unmarshal(m.errorRaw, &e); err != nil {
				e = mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "undecodable error: " + string(m.errorRaw)}
			}
			resp.Error = &e
		} else {
			resp.Result = append(json.RawMessage(nil), m.result...) // the line's buffer is reused
		}
		select {
		case ch <- resp:
		default:
		}
	}
}

func (t *stdioTransport) notify(line []byte) {
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
// handler supports) on a goroutine of its own.
func (t *stdioTransport) serverRequest(line []byte) {
	var req transport.JSONRPCRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return
	}
	t.notifyMu.RLock()
	h := t.onReq
	t.notifyMu.RUnlock()
	go func() {
		var resp *transport.JSONRPCResponse
		switch {
		case req.Method == string(mcp.MethodPing):
			resp = transport.NewJSONRPCResultResponse(req.ID, json.RawMessage("{}"))
		case h != nil:
			r, err := h(context.Background(), req)
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
		b, err := json.Marshal(resp)
		if err == nil {
			_ = t.write(append(b, '\n'))
		}
	}()
}

// SendNotification writes a notification.
func (t *stdioTransport) SendNotification(_ context.Context, n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return t.write(append(b, '\n'))
}

func (t *stdioTransport) write(b []byte) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return t.closedErr()
	}
	t.wmu.Lock()
	_, err := t.stdin.Write(b)
	t.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("write to server: %w", err)
	}
	return nil
}

// fail closes the transport for good with err.
func (t *stdioTransport) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	t.err = err
	close(t.done)
}

func (t *stdioTransport) closedErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return fmt.Errorf("%w: %v", transport.ErrTransportClosed, t.err)
	}
	return transport.ErrTransportClosed
}

// Close closes stdin and stdout and wakes every waiter. It does not touch
// the process: its owner stops it.
func (t *stdioTransport) Close() error {
	t.fail(errors.New("closed"))
	err := t.stdin.Close()
	_ = t.stdout.Close()
	return err
}

// encodeRequest renders a request line. tools/call with raw arguments, the
// hot path, is written by hand; the rest goes through encoding/json.
func encodeRequest(req transport.JSONRPCRequest) ([]byte, error) {
	id, _ := req.ID.Value().(int64)
	if p, ok := req.Params.(callParams); ok && json.Valid(p.Arguments) {
		b := make([]byte, 0, 72+len(p.Name)+len(p.Arguments))
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"method":"tools/call","params":{"name":`...)
		if plainName(p.Name) {
			b = append(append(append(b, '"'), p.Name...), '"')
		} else {
			name, err := json.Marshal(p.Name)
			if err != nil {
				return nil, err
			}
			b = append(b, name...)
		}
		b = append(b, `,"arguments":`...)
		b = appendCompact(b, p.Arguments)
		b = append(b, "}}\n"...)
		return b, nil
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", req.Method, err)
	}
	return append(b, '\n'), nil
}

// plainName reports whether s can be written as a JSON string as it is:
// printable ASCII without quotes, backslashes or the characters
// encoding/json escapes for HTML.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendCompact appends JSON without newlines (a line is one message).
func appendCompact(dst, src []byte) []byte {
	if bytes.IndexByte(src, '\n') < 0 && bytes.IndexByte(src, '\r') < 0 {
		return append(dst, src...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, src); err != nil {
		return append(dst, src...)
	}
	return append(dst, buf.Bytes()...)
}

// callParams are tools/call params with the arguments kept raw.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}
