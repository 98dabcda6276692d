package fakemcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type wireContent struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Data     string          `json:"data"`
	MIMEType string          `json:"mimeType"`
	URI      string          `json:"uri"`
	Resource json.RawMessage `json:"resource"`
}

type wireResult struct {
	Content           []wireContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func TestRawEchoByHand(t *testing.T) {
	t.Parallel()
	w := startWire(t, fakemcp.Command("raw-echo"), t.TempDir())

	// Unknown methods, server/discover included, are refused at once.
	m := w.request(1, "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	if e := decode[struct{ Code int }](t, m["error"]); e.Code != -32601 {
		t.Errorf("discover: %s", m["error"])
	}

	init := decode[struct {
		ProtocolVersion string
		ServerInfo      struct{ Name, Version string }
		Capabilities    map[string]json.RawMessage
	}](t, w.result(2, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`))
	if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "fake" || init.ServerInfo.Version != "1.0.0" || init.Capabilities["tools"] == nil {
		t.Errorf("initialize = %+v", init)
	}
	// A notification gets no answer: the next line answers the next request.
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := string(w.result(3, "ping", `{}`)); got != "{}" {
		t.Errorf("ping = %s", got)
	}
	// An unknown version gets the newest legacy one.
	v := decode[struct{ ProtocolVersion string }](t, w.result(4, "initialize", `{"protocolVersion":"1999-01-01"}`))
	if v.ProtocolVersion != "2025-11-25" {
		t.Errorf("unknown version answered with %q", v.ProtocolVersion)
	}

	tools := decode[struct{ Tools []wireTool }](t, w.result(5, "tools/list", `{}`)).Tools
	if len(tools) != 1 || tools[0].Name != "echo" || !bytes.Contains(tools[0].InputSchema, []byte(`"text"`)) {
		t.Errorf("tools = %+v", tools)
	}

	for i, text := range []string{"plain", "quote \" backslash \\ newline \n tab \t bell \a", "ünïcødé ✓ \u2028", ""} {
		arg, _ := json.Marshal(text)
		res := decode[wireResult](t, w.result(10+i, "tools/call", `{"name":"echo","arguments":{"text":`+string(arg)+`}}`))
		if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != text {
			t.Errorf("echo %q = %+v", text, res)
		}
	}
	m = w.request(20, "tools/call", `{"name":"nope"}`)
	if m["error"] == nil {
		t.Errorf("unknown tool answered %v", m)
	}
	// A string id is echoed as is.
	w.send(`{"jsonrpc":"2.0","id":"abc","method":"ping"}`)
	if m := w.recv(5 * time.Second); string(m["id"]) != `"abc"` {
		t.Errorf("string id: %v", m)
	}
	_ = w.stdin.Close()
	if code := w.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestWireShapes checks what the mcp-go based fake puts on the wire for the
// tools mcp-go's client would mangle or refuse.
func TestWireShapes(t *testing.T) {
	t.Parallel()
	w := startWire(t, fakemcp.Command("normal"), t.TempDir())
	w.handshake()

	tools := decode[struct{ Tools []wireTool }](t, w.result(2, "tools/list", `{}`)).Tools
	byName := map[string]wireTool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	if s := byName[fakemcp.ToolNoSchema]; s.Name == "" || s.InputSchema != nil {
		t.Errorf("no_schema = %+v, want no inputSchema", s)
	}
	if got := string(byName[fakemcp.ToolRichSchema].InputSchema); got != fakemcp.RichSchema {
		t.Errorf("rich_schema inputSchema =\n%s\nwant\n%s", got, fakemcp.RichSchema)
	}
	echo := byName[fakemcp.ToolEcho]
	if echo.Description == "" || !bytes.Contains(echo.InputSchema, []byte(`"properties":{"text":{`)) || !bytes.Contains(echo.InputSchema, []byte(`"description":"The text to echo."`)) {
		t.Errorf("echo = %s %s", echo.Description, echo.InputSchema)
	}
	if len(byName) != len(fakemcp.ToolNames()) {
		t.Errorf("%d tools, want %d", len(byName), len(fakemcp.ToolNames()))
	}

	call := func(id int, name string) wireResult {
		t.Helper()
		return decode[wireResult](t, w.result(id, "tools/call", `{"name":"`+name+`","arguments":{}}`))
	}

	if res := call(3, fakemcp.ToolUnknownContent); len(res.Content) != 2 || res.Content[1].Type != "hologram" {
		t.Errorf("unknown_content = %+v", res)
	}

	m := w.request(4, "tools/call", `{"name":"jsonrpc_error","arguments":{}}`)
	e := decode[struct {
		Code    int
		Message string
	}](t, m["error"])
	if m["result"] != nil || e.Code != -32603 || !strings.Contains(e.Message, fakemcp.JSONRPCErrorMessage) {
		t.Errorf("jsonrpc_error = %v", m)
	}

	res := call(5, fakemcp.ToolStructured)
	if res.Content == nil || len(res.Content) != 0 || string(res.StructuredContent) != fakemcp.StructuredJSON {
		t.Errorf("structured = %+v (%s)", res, res.StructuredContent)
	}

	res = call(6, fakemcp.ToolLinks)
	var types []string
	for _, c := range res.Content {
		types = append(types, c.Type)
	}
	if strings.Join(types, ",") != "resource_link,resource,resource,audio" ||
		!bytes.Contains(res.Content[1].Resource, []byte(`"text":"embedded notes"`)) ||
		!bytes.Contains(res.Content[2].Resource, []byte(`"blob":`)) || res.Content[3].MIMEType != "audio/wav" {
		t.Errorf("links = %+v", res.Content)
	}

	res = call(7, fakemcp.ToolLongText)
	if n := strings.Count(res.Content[0].Text, "\n"); n != fakemcp.LongTextLines || !strings.HasPrefix(res.Content[0].Text, "line 1\nline 2\n") {
		t.Errorf("long_text has %d lines", n)
	}

	// big_image is checked on the raw line: decoding 8 MB of JSON is slow
	// under the race detector.
	w.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"big_image","arguments":{}}}`)
	line := <-w.lines
	_, rest, _ := bytes.Cut(line, []byte(`"data":"`))
	b64, _, _ := bytes.Cut(rest, []byte(`"`))
	head, err := base64.StdEncoding.DecodeString(string(b64[:1024]))
	if err != nil || !bytes.Contains(line, []byte(`"mimeType":"image/png"`)) || !bytes.Contains(line, []byte(`"id":8,`)) {
		t.Fatalf("big_image: %.200s…, %v", line, err)
	}
	if n := base64.StdEncoding.DecodedLen(len(b64)); n <= 5<<20 {
		t.Errorf("big_image decodes to about %d bytes", n)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(head)); err != nil || cfg.Width != fakemcp.BigImageSide {
		t.Errorf("big_image config = %+v, %v", cfg, err)
	}

	if res := call(9, fakemcp.ToolWeird); res.Content[0].Text != fakemcp.ToolWeird {
		t.Errorf("weird = %+v", res)
	}
	if res := call(10, fakemcp.LongToolName); res.Content[0].Text != fakemcp.LongToolName {
		t.Errorf("long name = %+v", res)
	}
	args := `{"query":"q","target":{"x":1,"y":2}}`
	res = decode[wireResult](t, w.result(11, "tools/call", `{"name":"rich_schema","arguments":`+args+`}`))
	if res.Content[0].Text != args {
		t.Errorf("rich_schema = %q", res.Content[0].Text)
	}
}
