package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
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

// rpc is one MCP session over a started transport.
type rpc struct {
	tr     transport.Interface
	nextID atomic.Int64
	// meta is the encoded _meta object every request carries on the
	// 2026-07-28 protocol; nil on the handshake protocols.
	meta json.RawMessage
	info ServerInfo
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
		Capabilities    struct{}   `json:"capabilities"`
		ClientInfo      clientInfo `json:"clientInfo"`
	}{ProtocolVersion: version, ClientInfo: ci}
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
	err = c.tr.SendNotification(ctx, mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: string(mcp.MethodNotificationInitialized)},
	})
	if err != nil {
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
		mcp.MetaKeyClientCapabilities: struct{}{},
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

// callTool calls a tool and returns the raw result. When ctx ends before the
// answer, the server is sent notifications/cancelled for the request.
func (c *rpc) callTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return c.request(ctx, "tools/call", callParams{Name: name, Arguments: args})
}

// request sends one request with its own id and returns the raw result.
func (c *rpc) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	if c.meta != nil {
		var err error
		if params, err = withMeta(params, c.meta); err != nil {
			return nil, err
		}
	}
	resp, err := c.tr.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Method:  method,
		Params:  params,
	})
	if err != nil {
		if ctx.Err() != nil {
			c.cancel(id, context.Cause(ctx))
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, &RPCError{Code: resp.Error.Code, Message: resp.Error.Message, Data: rawData(resp.Error.Data)}
	}
	return resp.Result, nil
}

// cancel tells the server to stop working on request id. Best effort: the
// server may be gone.
func (c *rpc) cancel(id int64, cause error) {
	reason := "cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	ctx, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	_ = c.tr.SendNotification(ctx, mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": id,
				"reason":    reason,
			}},
		},
	})
}

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

func rawData(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	if b, ok := v.(json.RawMessage); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(strconv.Quote(fmt.Sprint(v)))
	}
	return b
}
