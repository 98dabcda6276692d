package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
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
	// headers are the tool's x-mcp-header parameters, mirrored into
	// Mcp-Param-* headers over HTTP on the 2026-07-28 protocol.
	headers []ParamHeader
	// stream: a request whose answer may never come (subscriptions/listen):
	// no call waits behind it, and its failure is not the connection's.
	stream bool
}

// toolRetry is the params of a tools/call sent again with the answers to
// the input the server asked for (input_required, 2026-07-28).
type toolRetry struct {
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

// retryParams is what a request that needs input is sent again with.
type retryParams struct {
	params         any
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
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

// versionedWire is a wire that carries the protocol version outside the
// messages (HTTP's MCP-Protocol-Version header): it is told of a change
// during the handshake.
type versionedWire interface {
	useVersion(version string)
}

// rpc is the MCP protocol over a started endpoint.
type rpc struct {
	tr     wire
	nextID atomic.Int64
	// meta is the encoded _meta object every request carries on the
	// 2026-07-28 protocol; nil on the handshake protocols.
	meta json.RawMessage
	info ServerInfo
	// toolsListChanged: the server declares tools.listChanged (read on
	// 2026-07-28, where the client opens a stream for it).
	toolsListChanged bool
	// peer answers the server's requests and says what the client
	// declares to it.
	peer *peer
	// cancels are the notifications/cancelled on their way (see cancel).
	cancels sync.WaitGroup
}

// capabilities is the client's capabilities object.
func (c *rpc) capabilities() any { return c.peer.capabilities() }

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
		ProtocolVersion string             `json:"protocolVersion"`
		ServerInfo      clientInfo         `json:"serverInfo"`
		Instructions    string             `json:"instructions"`
		Capabilities    serverCapabilities `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: decode result: %w", err)
	}
	if !mcp.IsValidProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("initialize: server chose unsupported protocol version %q", res.ProtocolVersion)
	}
	c.info = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version,
		ProtocolVersion: res.ProtocolVersion, Instructions: res.Instructions, Resources: res.Capabilities.resources()}
	if err := c.tr.notifyServer(string(mcp.MethodNotificationInitialized), nil); err != nil {
		return fmt.Errorf("initialized notification: %w", err)
	}
	return nil
}

// serverCapabilities is what the client reads of a server's capabilities.
type serverCapabilities struct {
	Resources json.RawMessage `json:"resources"`
	Tools     struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
}

// resources reports whether the server offers resources: an object there,
// even an empty one.
func (s serverCapabilities) resources() bool {
	return len(s.Resources) > 0 && s.Resources[0] == '{'
}

// discover is the 2026-07-28 start: no handshake, server/discover, and the
// protocol metadata on every request.
func (c *rpc) discover(ctx context.Context, version string, ci clientInfo) error {
	raw, err := c.discoverAt(ctx, version, ci)
	if other := unsupportedVersion(err); other != "" {
		// The server does not speak version: the newest it does that this
		// client speaks too, once.
		if !mcp.IsModernProtocol(other) {
			c.meta = nil
			if v, ok := c.tr.(versionedWire); ok {
				v.useVersion("")
			}
			return c.handshake(ctx, other, ci)
		}
		version = other
		raw, err = c.discoverAt(ctx, version, ci)
	}
	if err != nil {
		return fmt.Errorf("server/discover (protocol %s): %w", version, err)
	}
	var res struct {
		Instructions string                     `json:"instructions"`
		Capabilities serverCapabilities         `json:"capabilities"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("server/discover: decode result: %w", err)
	}
	var si clientInfo
	if b, ok := res.Meta[mcp.MetaKeyServerInfo]; ok {
		_ = json.Unmarshal(b, &si)
	}
	c.info = ServerInfo{Name: si.Name, Version: si.Version, ProtocolVersion: version, Instructions: res.Instructions,
		Resources: res.Capabilities.resources()}
	c.toolsListChanged = res.Capabilities.Tools.ListChanged
	return nil
}

// discoverAt sends server/discover at version.
func (c *rpc) discoverAt(ctx context.Context, version string, ci clientInfo) (json.RawMessage, error) {
	meta, err := json.Marshal(map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         ci,
		mcp.MetaKeyClientCapabilities: c.capabilities(),
	})
	if err != nil {
		return nil, err
	}
	c.meta = meta
	if v, ok := c.tr.(versionedWire); ok {
		v.useVersion(version)
	}
	return c.request(ctx, string(mcp.MethodServerDiscover), nil)
}

// codeUnsupportedVersion is the JSON-RPC error of a server that does not
// speak the request's protocol version (2026-07-28's
// UnsupportedProtocolVersionError); its data lists the ones it does.
const codeUnsupportedVersion = -32022

// unsupportedVersion is, when err says the server does not speak the
// version asked, the newest it lists that this client speaks too (the same
// one again, when the server rejected it once, as servers may); ""
// otherwise.
func unsupportedVersion(err error) string {
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != codeUnsupportedVersion {
		return ""
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(rpcErr.Data, &data) != nil {
		return ""
	}
	best := ""
	for _, v := range data.Supported {
		if !slices.Contains(mcpconfig.ProtocolVersions, v) {
			continue
		}
		if v > best { // the versions are dates
			best = v
		}
	}
	return best
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
// headers are the tool's x-mcp-header parameters (nil: none).
func (c *rpc) callTool(ctx context.Context, name string, args json.RawMessage, headers []ParamHeader, deadline time.Time) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return c.exchange(ctx, message{method: string(mcp.MethodToolsCall), tool: name, args: args, headers: headers}, deadline)
}

// request sends one request and returns the raw result.
func (c *rpc) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.exchange(ctx, message{method: method, params: params}, time.Time{})
}

// exchange sends m and returns its result. On the 2026-07-28 protocol a
// result that needs input (input_required) is answered — the peer fulfils
// each input request — and m sent again, with a new id, until the server
// completes it.
func (c *rpc) exchange(ctx context.Context, m message, deadline time.Time) (json.RawMessage, error) {
	pages := 0
	for round := 0; ; round++ {
		raw, err := c.exchangeOnce(ctx, m, deadline)
		if rpcErr, ok := urlElicitationRequired(err); ok && m.args != nil && c.peer.elicitor != nil {
			// 2025-11-25: the call needs the user at a page first. Once
			// they have been there, it is sent again.
			if pages++; pages > maxPageRounds {
				return nil, err
			}
			if err := c.peer.openPages(ctx, rpcErr); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil || c.meta == nil { // input_required exists only on 2026-07-28
			return raw, err
		}
		requests, state, ok := inputRequired(raw)
		if !ok {
			return raw, nil
		}
		if round >= maxInputRounds {
			return nil, errInputRounds
		}
		responses, err := c.peer.fulfil(ctx, requests)
		if err != nil {
			return nil, err
		}
		m = m.retry(responses, state)
	}
}

// inputRequired reads a result that needs input: its input requests by
// key and its request state.
func inputRequired(raw json.RawMessage) (map[string]json.RawMessage, string, bool) {
	if !bytes.Contains(raw, []byte(`"input_required"`)) {
		return nil, "", false
	}
	var r struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	if json.Unmarshal(raw, &r) != nil || r.ResultType != "input_required" {
		return nil, "", false
	}
	return r.InputRequests, r.RequestState, true
}

// retry is m again with the answers to the input its server asked for.
func (m message) retry(responses map[string]json.RawMessage, state string) message {
	if m.args != nil {
		m.params = toolRetry{Name: m.tool, Arguments: m.args, InputResponses: responses, RequestState: state}
		m.args, m.meta = nil, nil
		return m
	}
	base := m.params
	if r, ok := base.(retryParams); ok {
		base = r.params
	}
	m.params = retryParams{params: base, InputResponses: responses, RequestState: state}
	return m
}

// MarshalJSON is the request's params with the retry's members added.
func (r retryParams) MarshalJSON() ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if r.params != nil {
		b, err := json.Marshal(r.params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("params are not an object: %w", err)
		}
	}
	if len(r.InputResponses) > 0 {
		b, err := json.Marshal(r.InputResponses)
		if err != nil {
			return nil, err
		}
		fields["inputResponses"] = b
	}
	if r.RequestState != "" {
		b, _ := json.Marshal(r.RequestState)
		fields["requestState"] = b
	}
	return json.Marshal(fields)
}

func (c *rpc) exchangeOnce(ctx context.Context, m message, deadline time.Time) (json.RawMessage, error) {
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
	return r.decode()
}

// decode is the reply's result, or its JSON-RPC error as an *RPCError.
func (r reply) decode() (json.RawMessage, error) {
	if r.errRaw == nil {
		return r.result, nil
	}
	var e struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.errRaw, &e); err != nil {
		return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: chat.CapText("undecodable error: "+string(r.errRaw), maxRPCErrorBytes)}
	}
	if len(e.Data) > maxRPCErrorBytes {
		e.Data = nil // no use to anyone at that size
	}
	return nil, &RPCError{Code: e.Code, Message: chat.CapText(e.Message, maxRPCErrorBytes), Data: e.Data}
}

// cancel tells the server to stop working on request id, in the
// background: the caller does not wait for it (a server that stopped
// reading would hold /stop up for the notification's own timeout).
// liveServer.terminate waits for it, once the closed transport has ended
// it. Best effort: the server may be gone.
func (c *rpc) cancel(id int64, cause error) {
	reason := "cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	c.cancels.Go(func() {
		_ = c.tr.notifyServer(string(mcp.MethodNotificationCancelled), struct {
			RequestID int64  `json:"requestId"`
			Reason    string `json:"reason"`
		}{id, reason})
	})
}
