package mcpclient

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// The wire format of the stdio transport: requests rendered as one line
// each, and the jsonscan.Envelope of incoming lines found without decoding them.

// appendRequest renders m as one line. tools/call with raw arguments, the
// hot path, is written by hand; the rest goes through encoding/json.
func appendRequest(b []byte, m *message) ([]byte, error) {
	if m.args != nil && m.method == string(mcp.MethodToolsCall) {
		if !jsonscan.Valid(m.args) {
			return nil, fmt.Errorf("tools/call %s: arguments are not valid JSON", m.tool)
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, m.id, 10)
		b = append(b, `,"method":"tools/call","params":{"name":`...)
		b = jsonscan.AppendString(b, m.tool)
		b = append(b, `,"arguments":`...)
		b = jsonscan.AppendCompact(b, m.args)
		if m.meta != nil {
			b = append(b, `,"_meta":`...)
			b = append(b, m.meta...)
		}
		return append(b, "}}\n"...), nil
	}
	params := m.params
	if m.meta != nil {
		var err error
		if params, err = withMeta(params, m.meta); err != nil {
			return nil, err
		}
	}
	enc, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, m.id, m.method, params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.method, err)
	}
	return append(append(b, enc...), '\n'), nil
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
