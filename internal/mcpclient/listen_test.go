package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// changingServer is the changing fake on a transport, with its log: a
// command, or a URL served in process (a fresh one per call: its tool list
// is the test's).
func changingServer(t *testing.T, transport, version string, modes ...string) (mcpconfig.ServerConfig, string) {
	t.Helper()
	modes = append([]string{fakemcp.ModeChanging}, modes...)
	var cfg mcpconfig.ServerConfig
	var log string
	switch transport {
	case "stdio":
		cfg, log = fakeServer(t, "fake", modes...)
	case "http":
		log = filepath.Join(t.TempDir(), "http.log")
		web := httptest.NewServer(fakemcp.HTTPHandler(log, modes...))
		t.Cleanup(web.Close)
		cfg = httpConfig("fake", web.URL+"/mcp", nil)
	}
	cfg.ProtocolVersion = version
	return cfg, log
}

// waitChanged waits until the session was told of a change of its tools
// and the catalogue was refreshed: over HTTP the notification comes on
// another stream than the call's, so after it.
func waitChanged(t *testing.T, s *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	testkit.WaitFor(t, "notifications/tools/list_changed", 20*time.Second, func() bool { return s.ToolsChanged(ctx) })
}

func offers(t *testing.T, h *harness, name string) bool {
	t.Helper()
	tools, err := h.client.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(tools, func(tl Tool) bool { return tl.MCPName == name })
}

// The tool list stays live on every transport and both protocol eras: on
// 2025-11-25 from the notifications on stdio and on the HTTP streams, as
// before; on 2026-07-28 — where a server sends them only on a
// subscriptions/listen stream — from the one listen stream each live
// connection opens (and only there: 2025-11-25 opens none).
func TestToolsListChangedEveryEra(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+" "+version, func(t *testing.T) {
				cfg, log := changingServer(t, transport, version)
				h := newHarness(t, nil, cfg)
				s := h.session("")
				h.call(s, h.tool("fake", fakemcp.ToolAddTool), `{"name":"late"}`)
				waitChanged(t, s)
				if !offers(t, h, "late") {
					t.Fatal("the refreshed catalogue does not offer late")
				}
				h.call(s, h.tool("fake", fakemcp.ToolRemoveTool), `{"name":"late"}`)
				waitChanged(t, s)
				if offers(t, h, "late") {
					t.Error("late still offered after remove_tool")
				}
				listens := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventListen)
				want := 0
				if version == "2026-07-28" {
					want = 1
				}
				if len(listens) != want || (want == 1 && listens[0].Reason != "tools") {
					t.Errorf("subscriptions/listen requests: %+v, want %d for the tool list", listens, want)
				}
			})
		}
	}
}

// A server that does not declare tools.listChanged gets no listen stream.
func TestNoListenWithoutListChanged(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			var cfg mcpconfig.ServerConfig
			var log string
			if transport == "stdio" {
				cfg, log = fakeServer(t, "fake")
			} else {
				log = filepath.Join(t.TempDir(), "http.log")
				web := httptest.NewServer(fakemcp.HTTPHandler(log))
				t.Cleanup(web.Close)
				cfg = httpConfig("fake", web.URL+"/mcp", nil)
			}
			cfg.ProtocolVersion = "2026-07-28"
			h := newHarness(t, nil, cfg)
			s := h.session("")
			h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"x"}`)
			if ev := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventListen); len(ev) != 0 {
				t.Errorf("listen requests %+v to a server without tools.listChanged", ev)
			}
		})
	}
}

// The listen stream belongs to its connection's server: the idle stop
// and the session's close end it (the listener is gone, and over HTTP the
// server sees the stream closed), and the next start opens a new one.
func TestListenEndsWithItsServer(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cfg, log := changingServer(t, transport, "2026-07-28")
			cfg.IdleTimeout = time.Hour
			h := newHarness(t, nil, cfg)
			s := h.session("")
			echo := h.tool("fake", fakemcp.ToolEcho)
			h.call(s, echo, `{"text":"x"}`)
			l := s.conns["fake"].liveListener()
			if l == nil {
				t.Fatal("no listen stream on a 2026-07-28 connection")
			}
			c := s.conns["fake"]
			c.mu.Lock()
			c.idle.at = time.Now() // the idle stop, now
			c.idle.t.Reset(time.Millisecond)
			c.mu.Unlock()
			// The state says "not started" once the server is detached, just
			// before it is ended: the listener ends with it.
			testkit.WaitFor(t, "the idle stop", 10*time.Second, func() bool { st, _ := s.Status("fake"); return st.State == StateNotStarted })
			select {
			case <-l.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the listener still runs 10 s after its server stopped")
			}
			if transport == "http" {
				fakemcp.WaitForEvents(t, log, fakemcp.EventListenEnd, 1, 10*time.Second)
			}

			h.call(s, echo, `{"text":"y"}`)
			second := s.conns["fake"].liveListener()
			if second == nil || second == l {
				t.Fatal("the new process has no listen stream of its own")
			}
			if n := len(fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventListen)); n != 2 {
				t.Errorf("%d listen requests for two starts", n)
			}
			s.Close()
			select {
			case <-second.done:
			default:
				t.Fatal("the listener still runs after the session closed")
			}
		})
	}
}

// liveListener is the listen stream of the connection's live server.
func (c *connection) liveListener() *listener {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv == nil {
		return nil
	}
	return c.srv.listen
}

// dropFirstListen serves h, but breaks the first subscriptions/listen
// stream off once it is acknowledged: the connection drops, as a proxy's
// timeout or a restart does it.
type dropFirstListen struct {
	h       http.Handler
	dropped atomic.Bool
}

func (d *dropFirstListen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && !d.dropped.Load() {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"subscriptions/listen"`)) && d.dropped.CompareAndSwap(false, true) {
			ctx, cut := context.WithCancel(r.Context())
			defer cut()
			d.h.ServeHTTP(&cutWriter{ResponseWriter: w, cut: cut}, r.WithContext(ctx))
			panic(http.ErrAbortHandler) // the response never ends properly
		}
	}
	d.h.ServeHTTP(w, r)
}

// cutWriter passes writes on until the acknowledgement went out, then
// ends the handler and drops the rest.
type cutWriter struct {
	http.ResponseWriter
	mu  sync.Mutex
	cut context.CancelFunc
	off bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return len(p), nil
	}
	n, err := c.ResponseWriter.Write(p)
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	if bytes.Contains(p, []byte("notifications/subscriptions/acknowledged")) {
		c.off = true
		c.cut()
	}
	return n, err
}

func (c *cutWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.ResponseWriter.(http.Flusher); !c.off && ok {
		f.Flush()
	}
}

// A listen stream that broke off is opened again (after a wait), and the
// tool list's changes arrive on the new one.
func TestListenReopensAfterADrop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "http.log")
	web := httptest.NewServer(&dropFirstListen{h: fakemcp.HTTPHandler(log, fakemcp.ModeChanging)})
	t.Cleanup(web.Close)
	cfg := httpConfig("fake", web.URL+"/mcp", nil)
	cfg.ProtocolVersion = "2026-07-28"
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"x"}`)
	fakemcp.WaitForEvents(t, log, fakemcp.EventListen, 2, 20*time.Second)
	if st, _ := s.Status("fake"); st.State != StateRunning {
		t.Fatalf("the dropped stream took the connection down: %v (%s)", st.State, st.LastErr)
	}
	testkit.WaitFor(t, "the second stream's acknowledgement", 10*time.Second, func() bool {
		l := s.conns["fake"].liveListener()
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.granted
	})
	h.call(s, h.tool("fake", fakemcp.ToolAddTool), `{"name":"late"}`)
	waitChanged(t, s)
	if !offers(t, h, "late") {
		t.Error("the change on the reopened stream did not refresh the catalogue")
	}
	if !strings.Contains(h.logs.String(), "MCP subscription stream ended; it is opened again") {
		t.Errorf("the drop is not logged:\n%s", h.logs.String())
	}
}

// On stdio a server may end a subscription itself (notifications/cancelled
// naming it): the client opens another.
func TestListenReopensAfterTheServerEndedIt(t *testing.T) {
	cfg, log := changingServer(t, "stdio", "2026-07-28")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	if res := h.call(s, h.tool("fake", fakemcp.ToolEndListens), `{}`); res.Text() != "ended 1" {
		t.Fatalf("end_listens: %q", res.Text())
	}
	fakemcp.WaitForEvents(t, log, fakemcp.EventListen, 2, 20*time.Second)
	testkit.WaitFor(t, "the second stream's acknowledgement", 10*time.Second, func() bool {
		l := s.conns["fake"].liveListener()
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.granted
	})
	h.call(s, h.tool("fake", fakemcp.ToolAddTool), `{"name":"late"}`)
	waitChanged(t, s)
}

// A stream that keeps failing is opened again with a wait that doubles
// up to a minute — never in a loop; one the server refuses (or that
// grants nothing) is not opened again. On a synctest clock.
func TestListenBackoff(t *testing.T) {
	tests := []struct {
		name   string
		listen func(ctx context.Context, p *peer, id int64) (reply, error)
		want   int // streams opened in the first two minutes
	}{
		{"broken at once", func(context.Context, *peer, int64) (reply, error) {
			return reply{}, errors.New("stream broke")
		}, 7}, // at 0, 1, 3, 7, 15, 31 and 63 s
		{"ended by the server after its acknowledgement", func(_ context.Context, p *peer, id int64) (reply, error) {
			acknowledge(p, id, true)
			return reply{result: []byte(`{"resultType":"complete"}`)}, nil
		}, 7},
		{"refused", func(context.Context, *peer, int64) (reply, error) {
			return reply{errRaw: []byte(`{"code":-32601,"message":"no such method"}`)}, nil
		}, 1},
		{"nothing granted", func(ctx context.Context, p *peer, id int64) (reply, error) {
			acknowledge(p, id, false)
			<-ctx.Done()
			return reply{}, context.Cause(ctx)
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := mcpconfig.ServerConfig{Name: "mem", Command: "/bin/true", Enabled: true, ProtocolVersion: "2026-07-28",
					StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
				mem := &memServer{modern: true, listen: tt.listen}
				h := newHarness(t, nil, cfg)
				h.client.sp.dial = mem.dial
				s := h.session("")
				h.call(s, Tool{Server: "mem", MCPName: "echo", Name: "echo"}, `{"text":"x"}`)
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if n := mem.listenCount(); n != tt.want {
					t.Errorf("%d streams opened in two minutes, want %d", n, tt.want)
				}
				h.client.Close() // the listener ends with it: the bubble has nothing left
			})
		})
	}
}
