package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// httpServer serves the fake's tools over streamable HTTP and records the
// requests' Authorization headers and methods.
type httpServer struct {
	*httptest.Server
	auth      atomic.Value // last Authorization header
	deletes   atomic.Int32 // DELETE requests (sessions ended)
	noAuth    atomic.Int32 // requests without an Authorization header
	noAuthDel atomic.Int32 // DELETE requests among them
	down      atomic.Bool  // answer 503 to everything
}

func newHTTPServer(t *testing.T) *httpServer {
	t.Helper()
	s := &httpServer{}
	h := fakemcp.HTTPHandler("")
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if a := r.Header.Get("Authorization"); a != "" {
			s.auth.Store(a)
		} else {
			s.noAuth.Add(1)
			if r.Method == http.MethodDelete {
				s.noAuthDel.Add(1)
			}
		}
		if r.Method == http.MethodDelete {
			s.deletes.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func httpConfig(name, url string, headers map[string]string) mcpconfig.ServerConfig {
	return mcpconfig.ServerConfig{Name: name, Source: mcpconfig.SourceSettings, Origin: "test", URL: url, Headers: headers, Enabled: true,
		StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// A server at a URL: discovered once, called with the headers (an
// ${env:…} value from the host), JSON-RPC errors and timeouts mapped as for
// a process, its session ended by Stop, and a failed connection reported
// and reopened by the next call.
func TestHTTPServer(t *testing.T) {
	srv := newHTTPServer(t)
	cfg := httpConfig("remote", srv.URL+"/mcp", map[string]string{"Authorization": "Bearer ${env:REMOTE_MCP_TOKEN}"})
	h := newHarness(t, []string{"REMOTE_MCP_TOKEN=tok-0123456789abcdef"}, cfg)
	s := h.session("")

	echo := h.tool("remote", fakemcp.ToolEcho)
	if res := h.call(s, echo, `{"text":"over http"}`); res.IsError || res.Text() != "over http" {
		t.Fatalf("echo: %+v", res)
	}
	if got, _ := srv.auth.Load().(string); got != "Bearer tok-0123456789abcdef" {
		t.Errorf("Authorization header %q", got)
	}
	if res := h.call(s, h.tool("remote", fakemcp.ToolJSONRPCError), `{}`); !res.IsError ||
		!strings.Contains(res.Text(), fakemcp.JSONRPCErrorMessage) {
		t.Errorf("JSON-RPC error: %+v", res)
	}
	if res := h.call(s, h.tool("remote", fakemcp.ToolImage), `{}`); res.Images != 1 {
		t.Errorf("image: %+v", res)
	}

	st, _ := s.Status("remote")
	if st.State != StateRunning || st.PID != 0 {
		t.Errorf("status %+v", st)
	}
	detail := detailOf(t, s, "remote")
	if setup := detail.Setup; setup.URL != srv.URL+"/mcp" || !slices.Equal(setup.Headers, []string{"Authorization"}) ||
		setup.Command != "" || strings.Contains(fmt.Sprintf("%+v", detail), "tok-0123456789abcdef") {
		t.Errorf("/mcp remote: %+v", detail)
	}

	// A call that outlives its timeout.
	slowCfg := cfg
	slowCfg.CallTimeout = 300 * time.Millisecond
	h2 := newHarness(t, []string{"REMOTE_MCP_TOKEN=tok-0123456789abcdef"}, slowCfg)
	s2 := h2.session("")
	if res := h2.call(s2, h2.tool("remote", fakemcp.ToolSleep), `{"ms":3000}`); !res.IsError ||
		!strings.Contains(res.Text(), "timed out after 0.3s") {
		t.Errorf("timeout: %+v", res)
	}

	// Stop ends the HTTP session.
	s.Stop()
	testkit.WaitFor(t, "the session's DELETE", 5*time.Second, func() bool { return srv.deletes.Load() >= 1 })

	// The server goes down: the call fails with the reason, the next one
	// (server back) opens a new session.
	h.call(s, echo, `{"text":"reopen"}`)
	srv.down.Store(true)
	res := h.call(s, echo, `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Text(), "remote MCP server connection failed") || !strings.Contains(res.Text(), "reconnects on the next call") {
		t.Errorf("server down: %+v", res)
	}
	if st, _ := s.Status("remote"); st.State != StateDisconnected || !strings.Contains(st.LastErr, "503") {
		t.Errorf("status after the failure: %v, %q", st.State, st.LastErr)
	}
	srv.down.Store(false)
	if res := h.call(s, echo, `{"text":"back"}`); res.IsError || res.Text() != "back" {
		t.Errorf("after the server came back: %+v", res)
	}
	if st, _ := s.Status("remote"); st.Starts < 3 {
		t.Errorf("starts = %d, want a new session after Stop and after the failure", st.Starts)
	}
	// Every request carried the headers, the DELETEs that end sessions too.
	if n, d := srv.noAuth.Load(), srv.noAuthDel.Load(); n != 0 {
		t.Errorf("%d requests (%d DELETE) without the Authorization header", n, d)
	}
}

// A URL nothing answers fails discovery with the address in the reason.
func TestHTTPServerUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/mcp"
	srv.Close()
	h := newHarness(t, nil, httpConfig("gone", url, nil))
	_, err := h.cache.get(context.Background(), httpConfig("gone", url, nil))
	if err == nil || !strings.Contains(err.Error(), url) {
		t.Fatalf("discovery error %v", err)
	}
}
