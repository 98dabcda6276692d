package mcpclient

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// scriptRequest is one request a scripted server received.
type scriptRequest struct {
	ID     json.RawMessage
	Method string
	Params map[string]json.RawMessage
	Header http.Header
}

// scriptServer is a stateless (2026-07-28) MCP server over HTTP whose
// answers a test writes: answer returns the result, or an error object
// (with the HTTP status) for the request.
type scriptServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []scriptRequest
}

func newScriptServer(t *testing.T, answer func(r scriptRequest, n int) (result any, rpcErr any, status int)) *scriptServer {
	t.Helper()
	s := &scriptServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		sr := scriptRequest{ID: req.ID, Method: req.Method, Params: req.Params, Header: r.Header.Clone()}
		s.mu.Lock()
		s.seen = append(s.seen, sr)
		n := 0
		for _, x := range s.seen {
			if x.Method == req.Method {
				n++
			}
		}
		s.mu.Unlock()
		result, rpcErr, status := answer(sr, n)
		out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if rpcErr != nil {
			out["error"] = rpcErr
		} else {
			out["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) requests(method string) []scriptRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []scriptRequest
	for _, r := range s.seen {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func discoverResult() any {
	return map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}},
		"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]string{"name": "script", "version": "1"}}}
}

func modernConfig(url string) mcpconfig.ServerConfig {
	cfg := httpConfig("script", url, nil)
	cfg.ProtocolVersion = "2026-07-28"
	return cfg
}

// A server that rejects the version of the first server/discover
// (-32022, with the versions it speaks) is asked again at one it lists;
// one that speaks only an older protocol gets the initialize handshake.
func TestDiscoverRetriesASupportedVersion(t *testing.T) {
	tests := []struct {
		name      string
		supported []string
		want      string // the protocol the connection ends up on
		discovers int
	}{
		{"the same version once more", []string{"2026-07-28"}, "2026-07-28", 2},
		{"an older protocol", []string{"2025-06-18", "2025-11-25", "1999-01-01"}, "2025-11-25", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, func(r scriptRequest, n int) (any, any, int) {
				switch r.Method {
				case "server/discover":
					if n == 1 {
						return nil, map[string]any{"code": -32022, "message": "Unsupported protocol version",
							"data": map[string]any{"supported": tt.supported, "requested": r.Header.Get("Mcp-Protocol-Version")}}, http.StatusBadRequest
					}
					return discoverResult(), nil, 0
				case "initialize":
					return map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]string{"name": "old", "version": "1"}, "capabilities": map[string]any{}}, nil, 0
				case "tools/list":
					return map[string]any{"tools": []any{}}, nil, 0
				}
				return nil, map[string]any{"code": -32601, "message": "no"}, 0
			})
			h := newHarness(t, nil, modernConfig(srv.URL))
			cat, err := h.cache.get(t.Context(), modernConfig(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			if cat.ServerInfo.ProtocolVersion != tt.want {
				t.Errorf("protocol %q, want %q", cat.ServerInfo.ProtocolVersion, tt.want)
			}
			if got := len(srv.requests("server/discover")); got != tt.discovers {
				t.Errorf("%d server/discover requests, want %d", got, tt.discovers)
			}
			for _, r := range srv.requests("tools/list") {
				if v := r.Header.Get("Mcp-Protocol-Version"); v != tt.want {
					t.Errorf("tools/list carried MCP-Protocol-Version %q, want %q", v, tt.want)
				}
			}
		})
	}
}

// A tools/call answered with input_required is answered and sent again:
// a new JSON-RPC id, the request state echoed byte for byte (left out
// when the server sent none), the answers under the server's keys; the
// final result is what the caller gets.
func TestCallNeedingInputIsRetried(t *testing.T) {
	const state = `{"nonce":"n-1","step":1}`
	srv := newScriptServer(t, func(r scriptRequest, n int) (any, any, int) {
		switch r.Method {
		case "server/discover":
			return discoverResult(), nil, 0
		case "tools/list":
			return map[string]any{"tools": []any{
				map[string]any{"name": "with_state", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "no_state", "inputSchema": map[string]any{"type": "object"}},
			}}, nil, 0
		case "tools/call":
			var name string
			_ = json.Unmarshal(r.Params["name"], &name)
			if _, retried := r.Params["inputResponses"]; !retried {
				res := map[string]any{"resultType": "input_required", "inputRequests": map[string]any{
					"ok":    map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Sure?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"sure": map[string]any{"type": "boolean", "default": true}}}}},
					"where": map[string]any{"method": "roots/list"},
				}}
				if name == "with_state" {
					res["requestState"] = state
				}
				return res, nil, 0
			}
			return map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "done " + name}}}, nil, 0
		}
		return nil, map[string]any{"code": -32601, "message": "no"}, 0
	})
	cfg := modernConfig(srv.URL)
	cfg.Roots = true
	h := newHarness(t, nil, cfg)
	ws := t.TempDir()
	s := h.session(ws)
	s.SetElicitor(&scriptedUser{answer: func(chat.Elicitation) chat.ElicitResult { return chat.ElicitResult{Action: chat.ElicitAccept} }})
	for _, name := range []string{"with_state", "no_state"} {
		if res := h.call(s, h.tool("script", name), `{"x":1}`); res.IsError || res.Text() != "done "+name {
			t.Fatalf("%s: %+v", name, res)
		}
	}
	calls := srv.requests("tools/call")
	if len(calls) != 4 {
		t.Fatalf("%d tools/call requests, want 4", len(calls))
	}
	for i := 0; i < 4; i += 2 {
		first, retry := calls[i], calls[i+1]
		if string(first.ID) == string(retry.ID) {
			t.Errorf("the retry reused the id %s", first.ID)
		}
		if string(retry.Params["arguments"]) != `{"x":1}` || string(retry.Params["name"]) != string(first.Params["name"]) {
			t.Errorf("retry params %v", retry.Params)
		}
		var responses map[string]map[string]any
		if err := json.Unmarshal(retry.Params["inputResponses"], &responses); err != nil {
			t.Fatal(err)
		}
		if responses["ok"]["action"] != "accept" || responses["ok"]["content"].(map[string]any)["sure"] != true {
			t.Errorf("elicitation answer %v", responses["ok"])
		}
		if roots, _ := responses["where"]["roots"].([]any); len(roots) != 1 || roots[0].(map[string]any)["uri"] != "file://"+ws {
			t.Errorf("roots answer %v", responses["where"])
		}
		if _, ok := retry.Params["_meta"]; !ok {
			t.Error("the retry carries no _meta")
		}
		if retry.Header.Get("Mcp-Name") != strings.Trim(string(first.Params["name"]), `"`) {
			t.Errorf("retry Mcp-Name %q", retry.Header.Get("Mcp-Name"))
		}
	}
	if got := string(calls[1].Params["requestState"]); got != `"{\"nonce\":\"n-1\",\"step\":1}"` {
		t.Errorf("request state sent back %s", got)
	}
	if _, ok := calls[3].Params["requestState"]; ok {
		t.Error("a request state was sent back though the server sent none")
	}
}

// A tool's x-mcp-header parameters travel in Mcp-Param-* headers
// (Base64 for what a header cannot carry, none for null or missing
// ones); a tool whose annotations are invalid is not offered.
func TestParamHeaders(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"n":      map[string]any{"type": "integer", "x-mcp-header": "N"},
		"flag":   map[string]any{"type": "boolean", "x-mcp-header": "Flag"},
		"text":   map[string]any{"type": "string", "x-mcp-header": "Text"},
		"gone":   map[string]any{"type": "string", "x-mcp-header": "Gone"},
		"plain":  map[string]any{"type": "string"},
	}}
	bad := map[string]any{"type": "object", "properties": map[string]any{"o": map[string]any{"type": "object", "x-mcp-header": "O"}}}
	srv := newScriptServer(t, func(r scriptRequest, n int) (any, any, int) {
		switch r.Method {
		case "server/discover":
			return discoverResult(), nil, 0
		case "tools/list":
			return map[string]any{"tools": []any{
				map[string]any{"name": "route", "inputSchema": schema},
				map[string]any{"name": "bad", "inputSchema": bad},
			}}, nil, 0
		case "tools/call":
			return map[string]any{"content": []any{}}, nil, 0
		}
		return nil, map[string]any{"code": -32601, "message": "no"}, 0
	})
	h := newHarness(t, nil, modernConfig(srv.URL))
	cat, err := h.cache.get(t.Context(), modernConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 1 || cat.Tools[0].MCPName != "route" {
		t.Fatalf("tools %+v", cat.Tools)
	}
	if len(cat.Warnings) != 1 || !strings.Contains(cat.Warnings[0], `tool "bad" is not offered`) {
		t.Errorf("warnings %q", cat.Warnings)
	}
	s := h.session("")
	h.call(s, cat.Tools[0], `{"region":"us-west1","n":42,"flag":false,"text":"Hello, 世界","gone":null,"plain":"x"}`)
	hdr := srv.requests("tools/call")[0].Header
	want := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-N": "42", "Mcp-Param-Flag": "false",
		"Mcp-Param-Text": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-Gone": "", "Mcp-Param-Plain": "", "Mcp-Name": "route", "Mcp-Method": "tools/call"}
	for k, v := range want {
		if got := hdr.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

// A server that offers the standalone GET stream (before 2026-07-28) has
// what it sends there answered: a ping at once, a roots/list with the
// chat's workspace when the entry declares roots.
func TestGETStreamRequestsAnswered(t *testing.T) {
	answers := make(chan map[string]json.RawMessage, 4)
	ws := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"ping\"}\n\n"+
				"data: {\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"roots/list\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Mcp-Session-Id", "s-1")
		switch method := strings.Trim(string(m["method"]), `"`); {
		case method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"},"capabilities":{"tools":{}}}}`)
		case method == "tools/list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":{"tools":[]}}`)
		case method == "" && m["id"] != nil: // an answer to the server
			answers <- m
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := httpConfig("stream", srv.URL, nil)
	cfg.Roots = true
	h := newHarness(t, nil, cfg)
	s := h.session(ws)
	s.Prewarm("stream")
	got := map[string]string{}
	for len(got) < 2 {
		select {
		case m := <-answers:
			got[strings.Trim(string(m["id"]), `"`)] = string(m["result"])
		case <-time.After(10 * time.Second):
			t.Fatalf("answers so far: %v", got)
		}
	}
	if got["p-1"] != "{}" || got["r-1"] != `{"roots":[{"name":"workspace","uri":"file://`+ws+`"}]}` {
		t.Errorf("answers %v", got)
	}
}
