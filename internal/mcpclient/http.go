package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// httpEndpoint is an MCP session with a remote server over streamable
// HTTP, on mcp-go's client transport (session id, SSE answers, protocol
// headers): no process, one HTTP session per chat. A transport failure
// ends it, and the next call opens a new one.
type httpEndpoint struct {
	tr *transport.StreamableHTTP

	mu        sync.Mutex
	err       error // the failure that ended the session
	closeOnce sync.Once
}

var (
	_ endpoint = (*httpEndpoint)(nil)
	_ wire     = (*httpEndpoint)(nil)
)

// openHTTPSession connects to sp.URL with sp.Headers and negotiates under
// ctx (the startup timeout).
func openHTTPSession(ctx context.Context, sp mcpconfig.Spawn, cfg mcpconfig.ServerConfig, d sessionDeps) (*liveServer, error) {
	client := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: sp.Headers}}
	tr, err := transport.NewStreamableHTTP(sp.URL, transport.WithHTTPBasicClient(client),
		transport.WithHTTPLogger(d.logger.With("server", cfg.Name)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if err := tr.Start(context.Background()); err != nil { // the transport's lifetime, not the start's
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	h := &httpEndpoint{tr: tr}
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		d.logger.Debug("MCP notification ignored", "server", cfg.Name, "method", n.Method)
	})
	s := &liveServer{ep: h, rpc: &rpc{tr: h}, dir: sp.Dir}
	if err := s.rpc.handshake(ctx, cfg.ProtocolVersion, d.client); err != nil {
		h.terminate()
		// The URL as configured: an expanded ${env:…} stays out of messages.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: no answer from %s within the startup timeout of %s", cfg.Name, cfg.URL, fmtSeconds(cfg.StartupTimeout))
		}
		return nil, fmt.Errorf("%s: %s: %v", cfg.Name, cfg.URL, err)
	}
	tr.SetProtocolVersion(s.rpc.info.ProtocolVersion)
	return s, nil
}

// headerTransport sets the server's headers on every request. mcp-go's
// WithHTTPHeaders leaves them off the DELETE that ends a session, which a
// server requiring them refuses (the session would linger there).
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// roundTrip sends m as one HTTP request; the answer comes as JSON or on an
// SSE stream, which the transport reads.
func (h *httpEndpoint) roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error) {
	callCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadlineCause(ctx, deadline, errCallTimeout)
		defer cancel()
	}
	params := m.params
	if m.args != nil {
		params = struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{m.tool, m.args}
	}
	if m.meta != nil {
		var err error
		if params, err = withMeta(params, m.meta); err != nil {
			return reply{}, err
		}
	}
	resp, err := h.tr.SendRequest(callCtx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(m.id), Method: m.method, Params: params,
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return reply{}, context.Cause(ctx)
	case errors.Is(context.Cause(callCtx), errCallTimeout):
		return reply{}, errCallTimeout
	default:
		h.fail(err)
		return reply{}, err
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

func (h *httpEndpoint) done() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err != nil
}

func (h *httpEndpoint) waitExit(time.Duration) bool { return h.done() }

func (h *httpEndpoint) exitDescription() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return "connected"
	}
	return h.err.Error()
}

func (h *httpEndpoint) ending() (State, string) { return StateDisconnected, h.exitDescription() }

func (h *httpEndpoint) endMessage(server string) string {
	return fmt.Sprintf("%s MCP server connection failed: %s. It reconnects on the next call.", server, h.exitDescription())
}

func (h *httpEndpoint) tailLines() []string { return nil }

func (h *httpEndpoint) processID() int { return 0 }

func (h *httpEndpoint) closeTransport() { h.closeOnce.Do(func() { _ = h.tr.Close() }) }

// terminate ends the HTTP session (the transport sends DELETE).
func (h *httpEndpoint) terminate() { h.closeTransport() }
