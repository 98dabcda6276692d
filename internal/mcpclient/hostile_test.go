package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// shInit is the start of a hand-written stdio server in sh: it answers
// initialize (the first request, id 1) and reads notifications/initialized.
const shInit = `read -r l; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}'; read -r l; `

// shServer is a server entry running script (after shInit) in /bin/sh.
func shServer(name, script string) mcpconfig.ServerConfig {
	return mcpconfig.ServerConfig{Name: name, Source: mcpconfig.SourceConfig, Origin: "test", Command: "/bin/sh",
		Args: []string{"-c", shInit + script}, Enabled: true, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// callWithin calls tool and fails the test when the call takes longer than
// limit.
func callWithin(t *testing.T, s *Session, ctx context.Context, tool Tool, args string, limit time.Duration) (Result, time.Duration, error) {
	t.Helper()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := s.Call(ctx, tool, json.RawMessage(args))
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, time.Since(start), o.err
	case <-time.After(limit):
		t.Fatalf("the call did not return within %v", limit)
		return Result{}, 0, nil
	}
}

// A server that stops reading its input cannot hold a call: 256 KiB of
// arguments fill the pipe, and the write honours the call's timeout and
// /stop (it had no deadline: the call never returned, /stop got no reply).
// The server is then stopped, and the next call starts a new one.
//
// Each call has one thing that can end it: wedged's the timeout of 1 s,
// stuck's (an hour) the cancellation. (A cancellation 300 ms into a call
// with a 1 s timeout raced the timeout on a loaded machine.)
func TestWedgedServerCannotHoldACall(t *testing.T) {
	timed := shServer("wedged", `exec sleep 1000`)
	timed.CallTimeout = time.Second
	stuck := shServer("stuck", `exec sleep 1000`)
	stuck.CallTimeout = time.Hour
	h := newHarness(t, nil, timed, stuck)
	s := h.session("")
	big, _ := json.Marshal(map[string]string{"data": strings.Repeat("a", 256<<10)})

	for range 2 {
		res, took, err := callWithin(t, s, context.Background(), Tool{Server: "wedged", MCPName: "x", Name: "x"}, string(big), 30*time.Second)
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "timed out after 1s") {
			t.Errorf("result %q, %v after %v; want the call timeout", res.Text(), err, took)
		}
	}
	if st, _ := s.Status("wedged"); st.Starts != 2 {
		t.Errorf("%d starts: the wedged server was not replaced after its failed write", st.Starts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, Tool{Server: "stuck", MCPName: "x", Name: "x"}, big)
		done <- err
	}()
	testkit.WaitFor(t, "the call to stuck to run", 30*time.Second, func() bool {
		st, _ := s.Status("stuck")
		return st.State == StateRunning && st.InFlight == 1
	})
	cancel() // /stop
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled call returned %v; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call did not return: its write holds it")
	}
}

// A server that closes its stdout but keeps running is no longer "running"
// with every call failing until the idle timeout: the call that finds out
// says so, the server is stopped, the next call starts a new one.
func TestServerThatClosesItsOutputIsReplaced(t *testing.T) {
	cfg := shServer("mute", `exec 1>&-; exec sleep 1000`)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	tool := Tool{Server: "mute", MCPName: "x", Name: "x"}
	res, _, _ := callWithin(t, s, context.Background(), tool, `{}`, 15*time.Second)
	if !res.IsError || !strings.Contains(res.Text(), "closed its output") || !strings.Contains(res.Text(), "restarts on the next call") {
		t.Errorf("result %q", res.Text())
	}
	first, _ := s.Status("mute")
	testkit.WaitFor(t, "the mute server to be stopped", 10*time.Second, func() bool {
		return gone(first.PID)
	})
	res, _, _ = callWithin(t, s, context.Background(), tool, `{}`, 15*time.Second)
	if st, _ := s.Status("mute"); st.Starts != 2 {
		t.Errorf("%d starts after the second call (%q), want a new process", st.Starts, res.Text())
	}
}

// How a server ended is decided when its end is first recorded: the stop
// that follows (the bot ends a process whose output closed) does not turn
// "closed its output" into "exited (signal: terminated)" for the call that
// reports it (under load the stop won the race, 1 run in ~10).
func TestEndMessageIsTheRecordedCause(t *testing.T) {
	h := newHarness(t, nil, shServer("mute", `exec 1>&-; exec sleep 1000`))
	s := h.session("")
	tool := Tool{Server: "mute", MCPName: "x", Name: "x"}
	if res, _, _ := callWithin(t, s, context.Background(), tool, `{}`, 15*time.Second); !res.IsError {
		t.Fatalf("result %q", res.Text())
	}
	c := s.conns["mute"]
	c.mu.Lock()
	rec := c.rec.exit
	c.mu.Unlock()
	if rec == nil {
		t.Fatal("the end was not recorded")
	}
	rec.srv.terminate() // returns once the process is reaped
	if !rec.srv.ep.done() {
		t.Fatal("the process still runs after terminate")
	}
	if msg := c.exitMessage(rec.srv); !strings.Contains(msg, "closed its output") {
		t.Errorf("message after the stop: %q", msg)
	}
}

// testMaxMessage is the size limit of the oversized tests, set with
// Options.MaxMessageBytes: with the default 64 MB the race detector on a
// loaded machine read slower than the call timeout, and the clock ended
// the call before the limit did.
const testMaxMessage = 1 << 20

// withTestLimit is h with testMaxMessage as its limit (before any start).
func withTestLimit(h *harness) *harness {
	h.client.sp.maxMsg = testMaxMessage
	return h
}

// The limit is Options.MaxMessageBytes, 64 MB when unset.
func TestMaxMessageBytes(t *testing.T) {
	for _, tt := range []struct{ set, want int }{{0, 64 << 20}, {-1, 64 << 20}, {testMaxMessage, testMaxMessage}} {
		c := New(Options{Env: redact.NewEnvFilter(nil), MaxMessageBytes: tt.set})
		if c.sp.maxMsg != tt.want {
			t.Errorf("MaxMessageBytes %d: limit %d, want %d", tt.set, c.sp.maxMsg, tt.want)
		}
		c.Close()
	}
}

// A server's message over the size limit ends that call with a clear error
// instead of being buffered whole (a 1 GB line took the bot to 4 GB); the
// server is stopped and the next call starts a new one.
func TestOversizedMessageEndsTheCall(t *testing.T) {
	cfg := shServer("huge", `read -r l; head -c 2000000 /dev/zero | tr '\0' x; echo; exec sleep 1000`)
	cfg.CallTimeout = time.Minute // the limit, not the clock, ends it
	h := withTestLimit(newHarness(t, nil, cfg))
	s := h.session("")
	tool := Tool{Server: "huge", MCPName: "x", Name: "x"}
	res, _, _ := callWithin(t, s, context.Background(), tool, `{}`, 2*time.Minute)
	if !res.IsError || !strings.Contains(res.Text(), "over the size limit of 1 MB") {
		t.Errorf("result %.300q", res.Text())
	}
	first, _ := s.Status("huge")
	testkit.WaitFor(t, "the server to be stopped", 10*time.Second, func() bool { return gone(first.PID) })
}

// A server at a URL is read no further than the limit: a body (or an SSE
// stream) of 300 MB took the bot to 1.7 GB; the call now fails with the
// reason and the connection is reopened by the next call.
func TestOversizedHTTPAnswerEndsTheCall(t *testing.T) {
	for _, sse := range []bool{false, true} {
		handler := fakemcp.HTTPHandler("")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !bytes.Contains(body, []byte(`"tools/call"`)) {
				handler.ServeHTTP(w, r)
				return
			}
			var req struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(body, &req)
			start := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(req.ID, 10) + `,"result":{"content":[{"type":"text","text":"`
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				start = "event: message\ndata: " + start
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			_, _ = io.WriteString(w, start)
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for range 3 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		cfg := httpConfig("big", srv.URL+"/mcp", nil)
		cfg.CallTimeout = time.Minute // the limit, not the clock, ends it
		h := withTestLimit(newHarness(t, nil, cfg))
		s := h.session("")
		res, _, _ := callWithin(t, s, context.Background(), Tool{Server: "big", MCPName: "echo", Name: "echo"}, `{"text":"x"}`, 2*time.Minute)
		if !res.IsError || !strings.Contains(res.Text(), "over the size limit of 1 MB") {
			t.Errorf("sse %v: result %.300q", sse, res.Text())
		}
		if st, _ := s.Status("big"); st.State != StateDisconnected {
			t.Errorf("sse %v: state %v, want disconnected", sse, st.State)
		}
		// The session first: srv.Close waits for the handler, which may
		// still be writing into the answer the ended endpoint leaves to
		// its (asynchronous) end to close.
		s.Close()
		srv.Close()
	}
}

// Error texts are capped like results: a server's 1 MB JSON-RPC error, or
// megabytes of stderr before it dies, became a request of 73 MB (and a
// transcript line no reader took) when they skipped the cap.
func TestErrorTextsAreCapped(t *testing.T) {
	tests := []struct {
		name, script string
	}{
		{"JSON-RPC error", `read -r l; printf '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"'; head -c 1000000 /dev/zero | tr '\0' e; printf '"}}\n'; exec sleep 1000`},
		{"exit with a flood of stderr", `read -r l; for i in $(seq 20); do head -c 100000 /dev/zero | tr '\0' t >&2; echo >&2; done; exit 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, shServer("loud", tt.script))
			s := h.session("")
			res, _, _ := callWithin(t, s, context.Background(), Tool{Server: "loud", MCPName: "x", Name: "x"}, `{}`, 30*time.Second)
			if !res.IsError || len(res.Text()) > MaxErrorBytes+64 {
				t.Errorf("error result of %d bytes (cap %d): %.200q", len(res.Text()), MaxErrorBytes, res.Text())
			}
			// /mcp loud: what it shows is bounded before the chat caps it.
			if n := len(fmt.Sprintf("%+v", detailOf(t, s, "loud"))); n > 64<<10 {
				t.Errorf("/mcp loud's status is %d bytes", n)
			}
		})
	}
}

// A catalogue is bounded (10,000 tools or a 5 MB schema went to the model
// in every request, unwarned), and known secrets in descriptions and
// schemas are redacted (a server given a password put it in a schema
// default, which reached the model in clear).
func TestCatalogueLimitsAndRedaction(t *testing.T) {
	const secret = "pg-s3cret-0123456789abcdef"
	var tools []map[string]any
	for i := range MaxToolsPerServer + 88 {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("t%d", i), "inputSchema": map[string]any{"type": "object"}})
	}
	tools[0]["description"] = "connects with password " + secret
	tools[1]["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"pw": map[string]any{"type": "string", "default": secret}}}
	tools[2]["inputSchema"] = map[string]any{"type": "object", "description": strings.Repeat("huge ", 30000)}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"tools": tools}})
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := shServer("many", `read -r l; cat "$0"; exec sleep 1000`)
	cfg.Args = append(cfg.Args, file)
	cfg.Env = map[string]*string{"PGPASSWORD": ptrTo("${env:PGPASSWORD}")}
	h := newHarness(t, []string{"PGPASSWORD=" + secret}, cfg)
	cat, err := h.cache.get(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != MaxToolsPerServer-1 {
		t.Errorf("%d tools offered, want %d (the first %d, less the one with a huge schema)", len(cat.Tools), MaxToolsPerServer-1, MaxToolsPerServer)
	}
	warnings := strings.Join(cat.Warnings, "\n")
	if !strings.Contains(warnings, fmt.Sprintf("lists %d tools: only the first %d", MaxToolsPerServer+88, MaxToolsPerServer)) ||
		!strings.Contains(warnings, `tool "t2" is not offered: its input schema is 146 KB`) {
		t.Errorf("warnings:\n%s", warnings)
	}
	for _, tl := range cat.Tools {
		if strings.Contains(tl.Description, secret) || strings.Contains(string(tl.InputSchema), secret) {
			t.Errorf("tool %s carries the secret: %q %s", tl.Name, tl.Description, tl.InputSchema)
		}
	}
	if !json.Valid(cat.Tools[1].InputSchema) || !strings.Contains(string(cat.Tools[1].InputSchema), "[REDACTED]") {
		t.Errorf("schema of t1: %s", cat.Tools[1].InputSchema)
	}
}

func ptrTo[T any](v T) *T { return &v }

// The configured headers go to the configured server only: a 307 to
// another origin made the bot send `Authorization: Bearer <token>` there.
func TestHeadersNeverFollowARedirectElsewhere(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		http.Error(w, "nope", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	cfg := httpConfig("redir", redirector.URL+"/mcp", map[string]string{"Authorization": "Bearer tok-0123456789abcdef"})
	h := newHarness(t, nil, cfg)
	_, err := h.cache.get(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "redirected to another origin, which is refused") {
		t.Errorf("err = %v", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other origin got the Authorization header %d times", n)
	}
}
