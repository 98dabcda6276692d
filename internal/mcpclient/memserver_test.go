package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// memServer is an MCP server in memory: the endpoint of a live server with
// no process and no network, so lifecycle tests can run in a
// testing/synctest bubble (a goroutine blocked on a pipe would keep the
// bubble's clock from moving). It answers initialize, tools/list (one tool,
// echo) and tools/call of echo.
type memServer struct {
	mu         sync.Mutex
	starts     int
	terminated int
	live       []*memEndpoint
	// block, when set, holds every tools/call until it is closed (or the
	// call's context ends).
	block chan struct{}
	// called is the tool of every tools/call, in order.
	called []string
	// modern: it speaks 2026-07-28 (server/discover) and declares
	// tools.listChanged; listen is how it serves subscriptions/listen
	// (nil: acknowledged, held until the client ends it); listens counts
	// them.
	modern  bool
	listen  func(ctx context.Context, p *peer, id int64) (reply, error)
	listens int
}

func (m *memServer) calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.called...)
}

// dial is a spawner's dial: each start is a new endpoint.
func (m *memServer) dial(_ context.Context, _ mcpconfig.ServerConfig, _ mcpconfig.Spawn, _ func(), p *peer) (endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starts++
	e := &memEndpoint{srv: m, ended: make(chan struct{}), peer: p}
	m.live = append(m.live, e)
	return e, nil
}

func (m *memServer) counts() (starts, terminated int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starts, m.terminated
}

type memEndpoint struct {
	srv      *memServer
	ended    chan struct{}
	stopOnce sync.Once
	peer     *peer
}

func (m *memServer) listenCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listens
}

// acknowledge is the server's notifications/subscriptions/acknowledged of
// subscription id, granting the tool list or not.
func acknowledge(p *peer, id int64, tools bool) {
	p.notified(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: mcp.MethodNotificationSubscriptionsAcknowledged,
		Params: mcp.NotificationParams{Meta: map[string]any{mcp.MetaKeySubscriptionID: float64(id)},
			AdditionalFields: map[string]any{"notifications": map[string]any{"toolsListChanged": tools}}}}})
}

var _ endpoint = (*memEndpoint)(nil)

func (e *memEndpoint) roundTrip(ctx context.Context, m message, _ time.Time) (reply, error) {
	if e.done() {
		return reply{}, errors.New("ended")
	}
	if m.method == "tools/call" {
		e.srv.mu.Lock()
		e.srv.called = append(e.srv.called, m.tool)
		e.srv.mu.Unlock()
	}
	if m.method == "tools/call" && e.srv.block != nil {
		select {
		case <-e.srv.block:
		case <-ctx.Done():
			return reply{}, context.Cause(ctx)
		case <-e.ended: // terminated under the call, as a process would be
			return reply{}, errors.New("ended")
		}
	}
	switch m.method {
	case "server/discover":
		if !e.srv.modern {
			break
		}
		return reply{result: json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],` +
			`"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mem","version":"1"}}}`)}, nil
	case "subscriptions/listen":
		e.srv.mu.Lock()
		e.srv.listens++
		listen := e.srv.listen
		e.srv.mu.Unlock()
		if listen != nil {
			return listen(ctx, e.peer, m.id)
		}
		acknowledge(e.peer, m.id, true)
		select {
		case <-ctx.Done():
			return reply{}, context.Cause(ctx)
		case <-e.ended:
			return reply{}, errors.New("ended")
		}
	case "initialize":
		return reply{result: json.RawMessage(`{"protocolVersion":"2025-11-25","serverInfo":{"name":"mem","version":"1"}}`)}, nil
	case "tools/list":
		return reply{result: json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)}, nil
	case "tools/call":
		var args struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.args, &args)
		text, _ := json.Marshal(args.Text)
		return reply{result: json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`)}, nil
	}
	return reply{errRaw: json.RawMessage(`{"code":-32601,"message":"no such method"}`)}, nil
}

func (e *memEndpoint) notifyServer(string, any) error { return nil }

func (e *memEndpoint) done() bool {
	select {
	case <-e.ended:
		return true
	default:
		return false
	}
}

func (e *memEndpoint) waitExit(time.Duration) bool               { return e.done() }
func (e *memEndpoint) exitDescription() string                   { return "0" }
func (e *memEndpoint) ending() ending                            { return ending{kind: endExited, reason: "exited (0)"} }
func (e *memEndpoint) endMessage(server string, _ ending) string { return server + " ended" }
func (e *memEndpoint) tailLines() []string                       { return nil }
func (e *memEndpoint) processID() int                            { return 0 }
func (e *memEndpoint) closeTransport()                           {}
func (e *memEndpoint) memory() int64                             { return 1 << 20 }

func (e *memEndpoint) terminate() {
	e.stopOnce.Do(func() {
		close(e.ended)
		e.srv.mu.Lock()
		e.srv.terminated++
		e.srv.mu.Unlock()
	})
}
