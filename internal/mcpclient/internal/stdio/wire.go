package stdio

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// The wire format of the stdio transport: each request is one line (and
// each incoming line is read by jsonscan.ScanEnvelope, in read.go).

// appendRequest renders m as one line. tools/call with raw arguments, the
// hot path, is written by hand; the rest goes through encoding/json.
func appendRequest(b []byte, m *Request) ([]byte, error) {
	if m.Args != nil && m.Method == string(mcp.MethodToolsCall) {
		if !jsonscan.Valid(m.Args) {
			return nil, fmt.Errorf("tools/call %s: arguments are not valid JSON", m.Tool)
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, m.ID, 10)
		b = append(b, `,"method":"tools/call","params":{"name":`...)
		b = jsonscan.AppendString(b, m.Tool)
		b = append(b, `,"arguments":`...)
		b = jsonscan.AppendCompact(b, m.Args)
		if m.Meta != nil {
			b = append(b, `,"_meta":`...)
			b = append(b, m.Meta...)
		}
		return append(b, "}}\n"...), nil
	}
	// A request other than tools/call carries its _meta in Params.
	enc, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, m.ID, m.Method, m.Params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Method, err)
	}
	return append(append(b, enc...), '\n'), nil
}
