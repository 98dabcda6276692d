package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The protocol layer speaks MCP over an mcp-go transport and keeps results as
// raw JSON: mcp-go's typed client decodes tool input schemas into a struct
// that drops keywords (anyOf, description, …) and fails a whole call on a
// content type it does not know, and its 2026-07-28 path re-encodes every
// request's params to add per-request metadata. Here schemas and results
// reach the mapper byte for byte, and the per-request metadata of the modern
// protocol is encoded once per connection.

// defaultProtocolVersion is what a server gets unless its entry pins
// another: the newest revision with the initialize handshake. One round trip,
// no server/discover probe (which a server that ignores it turns into a
// timeout), and no per-request metadata.
const defaultProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION

// maxRPCErrorBytes bounds what is kept of a server's JSON-RPC error (the
// error result's own cap, after redaction, is smaller).
const maxRPCErrorBytes = 64 << 10

// RPCError is a JSON-RPC error answered by a server. It does not mean the
// server is broken: the call simply failed.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("JSON-RPC error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// message is an outgoing request: tools/call with raw arguments (the hot
// path, which the stdio wire writes by hand), or any method with params.
type message struct {
	id     int64
	method string
	params any             // without args; with the _meta of the 2026-07-28 protocol
	tool   string          // tools/call: the server's name of the tool
	args   json.RawMessage // tools/call: the arguments (non-nil selects the hot path)
	meta   json.RawMessage // tools/call on the 2026-07-28 protocol: its _meta
}

// reply is the answer to one request: a result or a JSON-RPC error.
type reply struct {
	result json.RawMessage
	errRaw json.RawMessage // non-nil for an error response
}

// errCallTimeout is what a wire's roundTrip returns when the call's
// deadline passed.
var errCallTimeout = errors.New("call timeout")

// withMeta adds the connection's _meta to params (an object or nil).
func withMeta(params any, meta json.RawMessage) (any, error) {
	fields := map[string]json.RawMessage{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("params are not an object: %w", err)
		}
	}
	fields["_meta"] = meta
	return fields, nil
}

// wire carries an rpc's messages: the stdio transport of a process, or an
// HTTP connection.
type wire interface {
	// roundTrip sends m and waits for its answer until ctx ends or
	// deadline (zero: none) passes, then errCallTimeout.
	roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error)
	// notifyServer sends a notification.
	notifyServer(method string, params any) error
}

// rpc is the MCP protocol over a started endpoint.
type rpc struct {
	tr     wire
	nextID atomic.Int64
	// meta is the encoded _meta object every request carries on the
	// 2026-07-28 protocol; nil on the handshake protocols.
	meta json.RawMessage
	info ServerInfo
	// roots says whether the client declares the roots capability: it
	// answers roots/list with the connection's workspace (a shared
	// server's chat session).
	roots bool
}

// capabilities is the client's capabilities object.
func (c *rpc) capabilities() any {
	if c.roots {
		return map[string]any{"roots": map[string]bool{"listChanged": false}}
	}
	return struct{}{}
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// handshake negotiates the protocol. version is the pinned revision or empty
// for the default.
func (c *rpc) handshake(ctx context.Context, version string, ci clientInfo) error {
	if version == "" {
		version = defaultProtocolVersion
	}
	if mcp.IsModernProtocol(version) {
		return c.discover(ctx, version, ci)
	}
	params := struct {
		ProtocolVersion string     `json:"protocolVersion"`
		Capabilities    any        `json:"capabilities"`
		ClientInfo      clientInfo `json:"clientInfo"`
	}{ProtocolVersion: version, Capabilities: c.capabilities(), ClientInfo: ci}
	raw, err := c.request(ctx, "initialize", params)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res struct {
		ProtocolVersion string     `json:"protocolVersion"`
		ServerInfo      clientInfo `json:"serverInfo"`
		Instructions    string     `json:"instructions"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: decode result: %w", err)
	}
	if !mcp.IsValidProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("initialize: server chose unsupported protocol version %q", res.ProtocolVersion)
	}
	c.info = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version,
		ProtocolVersion: res.ProtocolVersion, Instructions: res.Instructions}
	if err := c.tr.notifyServer(string(mcp.MethodNotificationInitialized), nil); err != nil {
		return fmt.Errorf("initialized notification: %w", err)
	}
	return nil
}

// discover is the 2026-07-28 start: no handshake, server/discover, and the
// protocol metadata on every request.
func (c *rpc) discover(ctx context.Context, version string, ci clientInfo) error {
	meta, err := json.Marshal(map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         ci,
		mcp.MetaKeyClientCapabilities: c.capabilities(),
	})
	if err != nil {
		return err
	}
	c.meta = meta
	raw, err := c.request(ctx, string(mcp.MethodServerDiscover), nil)
	if err != nil {
		return fmt.Errorf("server/discover (protocol %s): %w", version, err)
	}
	var res struct {
		Instructions string                     `json:"instructions"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("server/discover: decode result: %w", err)
	}
	var si clientInfo
	if b, ok := res.Meta[mcp.MetaKeyServerInfo]; ok {
		_ = json.Unmarshal(b, &si)
	}
	c.info = ServerInfo{Name: si.Name, Version: si.Version, ProtocolVersion: version, Instructions: res.Instructions}
	return nil
}

// listTools returns the raw tool objects of every page of tools/list.
func (c *rpc) listTools(ctx context.Context) ([]json.RawMessage, error) {
	var all []json.RawMessage
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, errors.New("tools/list: more than 1000 pages")
		}
		var params any
		if cursor != "" {
			params = struct {
				Cursor string `json:"cursor"`
			}{cursor}
		}
		raw, err := c.request(ctx, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("tools/list: decode result: %w", err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" || res.NextCursor == cursor {
			return all, nil
		}
		cursor = res.NextCursor
	}
}

// callTool calls a tool and returns the raw result, which is valid JSON.
// When ctx ends or deadline passes (errCallTimeout; zero means none) before
// the answer, the server is sent notifications/cancelled for the request.
func (c *rpc) callTool(ctx context.Context, name string, args json.RawMessage, deadline time.Time) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return c.exchange(ctx, message{method: string(mcp.MethodToolsCall), tool: name, args: args}, deadline)
}

// request sends one request and returns the raw result.
func (c *rpc) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.exchange(ctx, message{method: method, params: params}, time.Time{})
}

func (c *rpc) exchange(ctx context.Context, m message, deadline time.Time) (json.RawMessage, error) {
	m.id = c.nextID.Add(1)
	if c.meta != nil {
		if m.args != nil {
			m.meta = c.meta // tools/call, the hot path: the wire writes it
		} else {
			params, err := withMeta(m.params, c.meta)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.method, err)
			}
			m.params = params
		}
	}
	r, err := c.tr.roundTrip(ctx, m, deadline)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		c.cancel(m.id, context.Cause(ctx))
		return nil, context.Cause(ctx)
	case errors.Is(err, errCallTimeout):
		c.cancel(m.id, err)
		return nil, err
	default:
		return nil, err
	}
	if r.errRaw != nil {
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.errRaw, &e); err != nil {
			return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: capMessage("undecodable error: "+string(r.errRaw), maxRPCErrorBytes)}
		}
		if len(e.Data) > maxRPCErrorBytes {
			e.Data = nil // no use to anyone at that size
		}
		return nil, &RPCError{Code: e.Code, Message: capMessage(e.Message, maxRPCErrorBytes), Data: e.Data}
	}
	return r.result, nil
}

// cancel tells the server to stop working on request id. Best effort: the
// server may be gone.
func (c *rpc) cancel(id int64, cause error) {
	reason := "cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	_ = c.tr.notifyServer(string(mcp.MethodNotificationCancelled), struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason"`
	}{id, reason})
}
