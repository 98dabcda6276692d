package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// The wire format of the stdio transport: requests rendered as one line
// each, and the envelope of incoming lines found without decoding them.

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
	if !validJSON(line) {
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

// appendRequest renders m as one line. tools/call with raw arguments, the
// hot path, is written by hand; the rest goes through encoding/json.
func appendRequest(b []byte, m *message) ([]byte, error) {
	if m.args != nil && m.method == string(mcp.MethodToolsCall) {
		if !validJSON(m.args) {
			return nil, fmt.Errorf("tools/call %s: arguments are not valid JSON", m.tool)
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, m.id, 10)
		b = append(b, `,"method":"tools/call","params":{"name":`...)
		b = appendJSONString(b, m.tool)
		b = append(b, `,"arguments":`...)
		b = appendCompact(b, m.args)
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

// appendJSONString appends s as a JSON string, by hand when it needs no
// escaping.
func appendJSONString(b []byte, s string) []byte {
	if plainName(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	enc, _ := json.Marshal(s) // a string always encodes
	return append(b, enc...)
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
