package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A discovery whose server never answers is ended by Client.Close: no
// discovery process (not even one that ignores SIGTERM) and no temporary
// directory outlive it.
func TestCloseEndsAStuckDiscovery(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cfg, logPath := fakeServer(t, "stuck", fakemcp.ModeHangOnStart, fakemcp.ModeIgnoreSIGTERM, fakemcp.ModeCountStarts)
	cfg.StartupTimeout = time.Minute
	h := newHarness(t, nil, cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.client.Discover(context.Background())
	}()
	pid := fakemcp.WaitForEvents(t, logPath, fakemcp.EventStart, 1, 10*time.Second)[0].PID
	h.client.Close()
	if !gone(pid) {
		t.Errorf("the discovery process %d is still there after Client.Close returned", pid)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "volcanicbot-discover-*")); len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	<-done
}

// check runs Discover and exits: every discovery's clean-up (the process
// stopped, its temporary directory removed) is done when Close returns.
func TestCloseWaitsForDiscoveryCleanUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	a, _ := fakeServer(t, "a")
	b, _ := fakeServer(t, "b", fakemcp.ModeIgnoreSIGTERM)
	h := newHarness(t, nil, a, b)
	for _, sc := range h.client.Discover(context.Background()) {
		if sc.Err != nil {
			t.Fatal(sc.Err)
		}
	}
	h.client.Close()
	if left, _ := filepath.Glob(filepath.Join(tmp, "volcanicbot-discover-*")); len(left) > 0 {
		t.Errorf("temporary directories left after Close: %v", left)
	}
}

// A server that hangs at start holds up only the turns that came before its
// first discovery ended: after the cooldown the retry runs in the
// background, and no caller waits for it.
func TestNoTurnWaitsForARetriedDiscovery(t *testing.T) {
	cfg, _ := fakeServer(t, "hang", fakemcp.ModeHangOnStart)
	cfg.StartupTimeout = 2 * time.Second
	good, _ := fakeServer(t, "good")
	h := newHarness(t, nil, cfg, good)
	if tools, _ := h.client.Tools(context.Background()); len(tools) == 0 {
		t.Fatal("the good server's tools are missing")
	}
	// Retries are counted by the discoveries that timed out, not by the
	// processes that logged their start: on a loaded machine the fake can
	// be stopped by the startup timeout before it writes a line.
	timedOut := func() (n int) {
		for line := range strings.Lines(h.logs.String()) {
			if strings.Contains(line, "server=hang") && strings.Contains(line, "no answer within the startup timeout") {
				n++
			}
		}
		return n
	}
	testkit.WaitFor(t, "the first discovery to end", 10*time.Second, func() bool { return !h.cache.running(cfg) })
	for round := range 3 {
		h.now.Advance(DefaultFailureCooldown + time.Second)
		for range 3 { // the one that starts the retry, and those while it runs
			start := time.Now()
			tools, _ := h.client.Tools(context.Background())
			if d := time.Since(start); d > time.Second {
				t.Fatalf("round %d: a turn waited %v for the hung server's retried discovery", round, d)
			}
			if len(tools) == 0 {
				t.Fatalf("round %d: the good server's tools are missing", round)
			}
		}
		testkit.WaitFor(t, "the retry to end", 10*time.Second, func() bool { return !h.cache.running(cfg) })
		if n := timedOut(); n != round+2 {
			t.Fatalf("round %d: %d discoveries of the hung server timed out, want %d (one retry a cooldown)", round, n, round+2)
		}
	}
}

// /mcp never waits for a server: one still being discovered says so.
func TestStatusDoesNotWaitForDiscovery(t *testing.T) {
	cfg, logPath := fakeServer(t, "hang", fakemcp.ModeHangOnStart, fakemcp.ModeCountStarts)
	cfg.StartupTimeout = time.Minute
	h := newHarness(t, nil, cfg)
	s := h.session("")
	start := time.Now()
	st := statusOf(t, s, "hang")
	if d := time.Since(start); d > time.Second {
		t.Errorf("/mcp took %v", d)
	}
	if !st.Discovering {
		t.Errorf("/mcp: %+v", st)
	}
	fakemcp.WaitForEvents(t, logPath, fakemcp.EventStart, 1, 10*time.Second)
	start = time.Now()
	detail, err := s.ServerStatus("hang")
	if d := time.Since(start); d > time.Second || err != nil || !detail.Discovering {
		t.Errorf("/mcp hang took %v: %+v %v", d, detail, err)
	}
}

// /stop: a cancelled call returns at once, well within a second, while the
// server is still busy with it (it is told with notifications/cancelled).
func TestCancelledCallReturnsWithinASecond(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeLogCalls)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	tool := h.tool("fake", fakemcp.ToolSleep)
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"warm"}`) // started
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, tool, json.RawMessage(`{"ms":20000}`))
		errc <- err
	}()
	fakemcp.WaitForEvents(t, logPath, fakemcp.EventCall, 2, 10*time.Second) // the server runs it
	cancel()
	cancelled := time.Now()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(cancelled); d > time.Second {
			t.Errorf("the cancelled call returned %v after /stop, want under a second", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	fakemcp.WaitForEvents(t, logPath, fakemcp.EventCancelled, 1, 5*time.Second)
}

// A server whose start never answers is ended gracefully: SIGTERM to its
// whole group, and time for every member to exit before SIGKILL — not only
// the leader (a package runner such as npx exits at once, while the npm
// process under it is still writing its cache: killed then, it left a
// half-written ~/.npm/_npx that broke every later start).
func TestStartTimeoutEndsTheProcessTreeGracefully(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "terminated")
	cfg, _ := fakeServer(t, "slow")
	// The leader exits on SIGTERM at once; its child needs 300 ms to
	// finish writing.
	cfg.Command = "/bin/sh"
	cfg.Args = []string{"-c", `(trap 'sleep 0.3; echo done > "$1"; exit 0' TERM; while :; do sleep 0.05; done) & echo started >&2; wait`, "sh", marker}
	cfg.Env = nil
	cfg.StartupTimeout = 500 * time.Millisecond
	h := newHarness(t, nil, cfg)
	s := h.session("")
	res := h.call(s, Tool{Server: "slow", MCPName: "x", Name: "x"}, `{}`)
	if !res.IsError || !strings.Contains(res.Text(), "no answer within the startup timeout of 0.5s") ||
		!strings.Contains(res.Text(), "started") {
		t.Errorf("result = %q", res.Text())
	}
	if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != "done" {
		t.Errorf("the child of the starting process was not given time to exit: %v %q", err, b)
	}
}

// A package runner that times out at start: the error says it may still be
// installing, with its stderr.
func TestInstallerTimeoutSaysItMayBeInstalling(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "npx")
	script := "#!/bin/sh\necho 'npm warn exec The following package was not found and will be installed: x@1' >&2\nexec sleep 30\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := fakeServer(t, "pkg")
	cfg.Command, cfg.Args, cfg.Env = bin, []string{"-y", "x@1"}, nil
	cfg.StartupTimeout = 500 * time.Millisecond
	h := newHarness(t, nil, cfg)
	_, err := h.cache.get(context.Background(), cfg)
	if err == nil {
		t.Fatal("discovery succeeded")
	}
	for _, want := range []string{"no answer within the startup timeout of 0.5s", "npx may still be downloading or building the package",
		"raise startupTimeoutSeconds", "will be installed: x@1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A server that exits at start without a word: the error says how to see
// why.
func TestSilentExitSaysWhatToTry(t *testing.T) {
	cfg, _ := fakeServer(t, "silent")
	cfg.Command, cfg.Args, cfg.Env = "/bin/sh", []string{"-c", "exit 1"}, nil
	h := newHarness(t, nil, cfg)
	_, err := h.cache.get(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "exited (1) during start-up") ||
		!strings.Contains(err.Error(), "wrote nothing to stderr: run `/bin/sh -c \"exit 1\"` in a shell") {
		t.Errorf("err = %v", err)
	}
}

// A server at a URL pinned to protocol 2026-07-28 sends MCP-Protocol-Version
// from its very first request (server/discover): conformance servers refuse
// a request without it (-32020).
func TestModernProtocolHeaderOnTheFirstRequest(t *testing.T) {
	var first atomic.Value
	handler := fakemcp.HTTPHandler("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			first.CompareAndSwap(nil, r.Header.Get("MCP-Protocol-Version")+"|")
			if r.Header.Get("MCP-Protocol-Version") == "" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"missing MCP-Protocol-Version header"}}`))
				return
			}
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := httpConfig("modern", srv.URL+"/mcp", nil)
	cfg.ProtocolVersion = "2026-07-28"
	h := newHarness(t, nil, cfg)
	s := h.session("")
	if res := h.call(s, h.tool("modern", fakemcp.ToolEcho), `{"text":"hi"}`); res.IsError || res.Text() != "hi" {
		t.Errorf("echo = %+v", res)
	}
	if got, _ := first.Load().(string); got != "2026-07-28|" {
		t.Errorf("the first request's MCP-Protocol-Version = %q, want 2026-07-28", strings.TrimSuffix(got, "|"))
	}
}

// restartingServer is a streamable HTTP server that can "restart": it then
// forgets every session and answers a request naming one as TypeScript-SDK
// servers do, with HTTP 400 "Bad Request: No valid session ID provided".
type restartingServer struct {
	mu      sync.Mutex
	handler http.Handler
	known   map[string]bool
}

func newRestartingServer() *restartingServer {
	return &restartingServer{handler: fakemcp.HTTPHandler(""), known: map[string]bool{}}
}

func (s *restartingServer) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fakemcp.HTTPHandler("")
	s.known = map[string]bool{}
}

func (s *restartingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.handler
	id := r.Header.Get("Mcp-Session-Id")
	known := s.known[id]
	s.mu.Unlock()
	if id != "" && !known {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`))
		return
	}
	rec := &sessionRecorder{ResponseWriter: w}
	h.ServeHTTP(rec, r)
	if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" {
		s.mu.Lock()
		s.known[sid] = true
		s.mu.Unlock()
	}
}

type sessionRecorder struct{ http.ResponseWriter }

func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// A remote server that restarts loses its sessions: the call that finds
// out fails (it is not retried: it may have side effects), /mcp says the
// connection is gone, and the next call reconnects — instead of every call
// failing until /mcp restart.
func TestHTTPServerRestartReconnects(t *testing.T) {
	rs := newRestartingServer()
	srv := httptest.NewServer(rs)
	t.Cleanup(srv.Close)
	cfg := httpConfig("remote", srv.URL+"/mcp", nil)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	echo := h.tool("remote", fakemcp.ToolEcho)
	if res := h.call(s, echo, `{"text":"one"}`); res.IsError || res.Text() != "one" {
		t.Fatalf("echo = %+v", res)
	}
	rs.restart()
	res := h.call(s, echo, `{"text":"two"}`)
	if !res.IsError || !strings.Contains(res.Text(), "no longer knows this connection's session") ||
		!strings.Contains(res.Text(), "reconnects on the next call") {
		t.Errorf("the call after the restart = %q", res.Text())
	}
	if st, _ := s.Status("remote"); st.State != StateDisconnected {
		t.Errorf("state %v, want disconnected", st.State)
	}
	for _, text := range []string{"three", "four"} {
		if res := h.call(s, echo, `{"text":"`+text+`"}`); res.IsError || res.Text() != text {
			t.Errorf("echo %s after the reconnect = %q", text, res.Text())
		}
	}
	if st, _ := s.Status("remote"); st.State != StateRunning || st.Starts != 2 {
		t.Errorf("status %+v, want running after 2 starts", st)
	}
}
