package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// httpEndpoint is an MCP connection to a remote server over streamable
// HTTP, on mcp-go's client transport (its Mcp-Session-Id, SSE answers,
// protocol headers): no process, one connection per chat. A transport
// failure, or the server no longer knowing the connection's session, ends
// it, and the next call opens a new one.
type httpEndpoint struct {
	tr      *transport.StreamableHTTP
	version atomic.Value // string: the pinned, then the negotiated protocol version
	url     string
	client  *http.Client // the transport's: the configured headers, the size limit

	mu        sync.Mutex
	err       error // the failure that ended the connection
	closeOnce sync.Once
}

var _ endpoint = (*httpEndpoint)(nil)

// errSessionLost is the failure of a connection whose server answered that
// it does not know the session (it restarted, or expired the session).
var errSessionLost = errors.New("the server no longer knows this connection's session (it may have restarted)")

// dialHTTP connects to sp.URL with sp.Headers. Nothing is sent until the
// handshake. p answers the server's requests, on a call's stream or on the
// standalone GET stream, which the client opens when the server offers it
// (protocols before 2026-07-28, which has none).
//
// auth, when set, keeps the server's OAuth state: its token goes on every
// request, and a Bearer challenge ends the request with a
// NeedsLoginError. No answer is read beyond maxBytes.
func dialHTTP(sp mcpconfig.Spawn, cfg mcpconfig.ServerConfig, logger *slog.Logger, p *peer, auth *authStore, maxBytes int) (*httpEndpoint, error) {
	h := &httpEndpoint{url: sp.URL}
	u, err := url.Parse(sp.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cfg.Name, cfg.URL, err)
	}
	origin := originOf(u)
	var base http.RoundTripper = http.DefaultTransport
	if auth != nil {
		base = authTransport{base: base, store: auth, server: cfg.Name, origin: origin, plain: &http.Client{Timeout: 30 * time.Second}}
	}
	h.client = &http.Client{
		Transport: headerTransport{base: base, headers: sp.Headers, host: sp.Host, origin: origin,
			lost: h.sessionLost, tooLarge: h.fail, max: int64(maxBytes)},
		// The configured headers (a token) are for the configured server:
		// a redirect elsewhere is refused, not followed with them.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != origin {
				return fmt.Errorf("%w: to %s", errCrossOriginRedirect, originOf(req.URL))
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
	tlog := slog.New(quietHandler{logger.With("server", cfg.Name).Handler()})
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(h.client), transport.WithHTTPLogger(tlog),
		//lint:ignore SA1019 the standalone GET stream of the handshake protocols (mcp-go leaves it out on 2026-07-28)
		transport.WithContinuousListening()}
	tr, err := transport.NewStreamableHTTP(sp.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if err := tr.Start(context.Background()); err != nil { // the transport's lifetime, not the start's
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if mcp.IsModernProtocol(cfg.ProtocolVersion) {
		// A pinned 2026-07-28 starts with server/discover, which must carry
		// the MCP-Protocol-Version header like every later request.
		tr.SetProtocolVersion(cfg.ProtocolVersion)
		h.version.Store(cfg.ProtocolVersion)
	}
	tr.SetNotificationHandler(p.notified)
	tr.SetRequestHandler(p.handler(h.reply))
	h.tr = tr
	return h, nil
}

// reply posts the answer to a server's request, as mcp-go's transport
// does, for the answers that come after its request handling gave up
// (see peer.replyLater).
func (h *httpEndpoint) reply(ctx context.Context, r *transport.JSONRPCResponse) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id := h.tr.GetSessionId(); id != "" {
		req.Header.Set(transport.HeaderKeySessionID, id)
	}
	if v, _ := h.version.Load().(string); v != "" {
		req.Header.Set(transport.HeaderKeyProtocolVersion, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// quietHandler logs mcp-go's transport at debug: what it reports as errors
// are ordinary outcomes here (a server without the GET stream, a stream
// the server closed), and the client reports real failures itself.
type quietHandler struct{ slog.Handler }

func (q quietHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return q.Handler.Enabled(ctx, slog.LevelDebug)
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return q.Handler.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietHandler{q.Handler.WithAttrs(attrs)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.Handler.WithGroup(name)}
}

// rootsResult is the roots/list answer naming dir, the one root.
func rootsResult(dir string) json.RawMessage {
	u := url.URL{Scheme: "file", Path: dir}
	b, _ := json.Marshal(map[string]any{"roots": []map[string]string{{"uri": u.String(), "name": "workspace"}}})
	return b
}

// sharedEndpoint is a chat's session on a Shared server's process: an
// HTTP connection that gives its use of the process back when it ends.
type sharedEndpoint struct {
	*httpEndpoint
	host        *host
	proc        *hostProc // the host's process the session is open on
	releaseOnce sync.Once
	rootsAsked  atomic.Int32 // the server's roots/list requests: one per context it opens
}

func (s *sharedEndpoint) terminate() {
	s.httpEndpoint.terminate()
	s.releaseOnce.Do(func() { s.host.release(s.proc) })
}

// httpOf is the HTTP connection of ep, if it is one.
func httpOf(ep endpoint) (*httpEndpoint, bool) {
	switch e := ep.(type) {
	case *httpEndpoint:
		return e, true
	case *sharedEndpoint:
		return e.httpEndpoint, true
	}
	return nil, false
}

// negotiated sets the protocol version the handshake agreed on, for the
// headers of every later request.
func (h *httpEndpoint) negotiated(version string) { h.useVersion(version) }

// useVersion is the protocol version the next requests' headers carry
// (the handshake tries one, then another).
func (h *httpEndpoint) useVersion(version string) {
	h.tr.SetProtocolVersion(version)
	h.version.Store(version)
}

// standardHeaders are the Mcp-Method and Mcp-Name headers protocol
// 2026-07-28 requires on every request (nil on the older protocols).
func (h *httpEndpoint) standardHeaders(m message) http.Header {
	version, _ := h.version.Load().(string)
	if !mcp.IsModernProtocol(version) {
		return nil
	}
	var named []byte // only the member the headers name: params.name of tools/call
	if m.args != nil {
		named = jsonscan.AppendString([]byte(`{"name":`), m.tool)
		named = append(named, '}')
	} else if b, err := json.Marshal(m.params); err == nil {
		named = b
	}
	header := http.Header{}
	for k, v := range mcp.StandardHeaders(version, mcp.MCPMethod(m.method), named) {
		header.Set(k, v)
	}
	if len(m.headers) > 0 {
		args := m.args
		if r, ok := m.params.(toolRetry); ok {
			args = r.Arguments
		}
		setParamHeaders(header, m.headers, args)
	}
	return header
}

// headerTransport sets the server's headers on every request (mcp-go's
// WithHTTPHeaders leaves them off the DELETE that ends a session, which a
// server requiring them refuses), and watches for the answer that says the
// session is gone: 404, or a 400 that names the session (TypeScript-SDK
// servers answer "Bad Request: No valid session ID provided").
type headerTransport struct {
	base     http.RoundTripper
	headers  map[string]string
	host     string // the Host of every request to origin (Spawn.Host), "": the URL's
	origin   string // the configured URL's scheme://host:port: the only one the headers go to
	lost     func(status int, body string)
	tooLarge func(error) // an answer went over the size limit
	max      int64       // the size limit of an answer (of each SSE stream)
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if (len(t.headers) > 0 || t.host != "") && originOf(r.URL) == t.origin {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
		if t.host != "" {
			r.Host = t.host
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	over := t.tooLarge
	if r.Context().Value(streamKey{}) != nil {
		// A long-lived stream reaches the limit in time: the stream ends
		// (and is opened again), the connection stays.
		over = func(error) {}
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, limit: t.max, over: over}
	if r.Method != http.MethodPost || r.Header.Get(transport.HeaderKeySessionID) == "" {
		return resp, nil
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		t.lost(resp.StatusCode, "")
	case http.StatusBadRequest:
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr == nil && strings.Contains(strings.ToLower(string(body)), "session") {
			t.lost(resp.StatusCode, string(body))
		}
	}
	return resp, nil
}

// errCrossOriginRedirect refuses a redirect to another server.
var errCrossOriginRedirect = errors.New("the server redirected to another origin, which is refused (the configured headers are for it alone)")

// originOf is a URL's scheme://host:port, the port made explicit.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// limitedBody is a response body that ends with an error past the limit:
// a server's answer (a JSON body, or every event of an SSE stream) is never
// read beyond it, whatever the server sends.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64 // for the message
	over  func(error)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		err := fmt.Errorf("%w of %d MB", stdio.ErrTooLarge, b.limit>>20)
		b.over(err) // mcp-go's SSE reader does not pass the error on
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// sessionLost ends the connection: the server does not know its session.
func (h *httpEndpoint) sessionLost(status int, body string) {
	err := fmt.Errorf("%w (HTTP %d)", errSessionLost, status)
	if msg := jsonRPCMessage(body); msg != "" {
		err = fmt.Errorf("%w (HTTP %d: %s)", errSessionLost, status, msg)
	}
	h.fail(err)
}

// jsonRPCMessage is the error message of a JSON-RPC error body, or "".
func jsonRPCMessage(body string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil {
		return ""
	}
	return e.Error.Message
}

// roundTrip sends m as one HTTP request; the answer comes as JSON or on an
// SSE stream, which the transport reads.
func (h *httpEndpoint) roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error) {
	if h.done() {
		return reply{}, h.failure()
	}
	callCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadlineCause(ctx, deadline, errCallTimeout)
		defer cancel()
	}
	params := m.params
	if m.args != nil {
		call := struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}{m.tool, m.args, m.meta}
		params = call
	}
	if m.stream {
		callCtx = context.WithValue(callCtx, streamKey{}, true)
	}
	resp, err := h.tr.SendRequest(callCtx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(m.id), Method: m.method, Params: params,
		Header: h.standardHeaders(m),
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return reply{}, context.Cause(ctx)
	case errors.Is(context.Cause(callCtx), errCallTimeout):
		return reply{}, errCallTimeout
	case m.stream:
		// A stream that broke off (a proxy's timeout, a restart) is the
		// stream's end, not the connection's: it is opened again.
		return reply{}, cleanSendError(err)
	default:
		if nl, ok := needsLogin(err); ok { // refused, not broken: the session holds
			return reply{}, nl
		}
		h.fail(cleanSendError(err))
		return reply{}, h.failure()
	}
	if h.done() { // the answer said the session is gone
		return reply{}, h.failure()
	}
	if resp.Error != nil {
		b, err := json.Marshal(resp.Error)
		if err != nil {
			return reply{}, err
		}
		return reply{errRaw: b}, nil
	}
	return reply{result: resp.Result}, nil
}

// streamKey marks the context of a stream's HTTP request (message.stream).
type streamKey struct{}

// closesStreams: a stream ends when its request's context does (the
// response stream is closed), without notifications/cancelled.
func (h *httpEndpoint) closesStreams() {}

// cleanSendError drops the repetitions of mcp-go's "failed to send
// request: " (it wraps the same words twice).
func cleanSendError(err error) error {
	const prefix = "failed to send request: "
	msg := err.Error()
	for strings.HasPrefix(msg, prefix+prefix) {
		msg = strings.TrimPrefix(msg, prefix)
	}
	if msg == err.Error() {
		return err
	}
	return wrapped{msg, err}
}

// wrapped is an error with another message that still unwraps to the
// original.
type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.err }

// notifyServer sends a notification (best effort, bounded).
func (h *httpEndpoint) notifyServer(method string, params any) error {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: method}}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &n.Params.AdditionalFields); err != nil {
			return fmt.Errorf("notification params are not an object: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.tr.SendNotification(ctx, n)
}

func (h *httpEndpoint) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
}

func (h *httpEndpoint) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *httpEndpoint) done() bool { return h.failure() != nil }

func (h *httpEndpoint) waitExit(time.Duration) bool { return h.done() }

func (h *httpEndpoint) exitDescription() string {
	if err := h.failure(); err != nil {
		return err.Error()
	}
	return "connected"
}

func (h *httpEndpoint) ending() ending {
	return ending{kind: endDisconnected, reason: h.exitDescription()}
}

func (h *httpEndpoint) endMessage(server string, _ ending) string {
	return fmt.Sprintf("%s MCP server connection failed: %s. It reconnects on the next call.", server, h.exitDescription())
}

func (h *httpEndpoint) tailLines() []string { return nil }

func (h *httpEndpoint) processID() int { return 0 }

func (h *httpEndpoint) memory() int64 { return 0 }

func (h *httpEndpoint) closeTransport() { h.closeOnce.Do(func() { _ = h.tr.Close() }) }

// terminate ends the HTTP session (the transport sends DELETE).
func (h *httpEndpoint) terminate() { h.closeTransport() }
