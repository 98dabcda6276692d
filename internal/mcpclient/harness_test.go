package mcpclient

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestMain(m *testing.M) {
	fakemcp.MainIfRequested()
	os.Exit(m.Run())
}

// harness is a Client over fake servers, with the real environment filter
// and secret registry, and the log captured.
type harness struct {
	t       *testing.T
	client  *Client
	cache   *catalogCache
	secrets *redact.Registry
	logs    *testkit.SyncBuffer
	now     *testkit.Clock
}

// newHarness builds a client over servers; host is the injected host
// environment (os.Environ plus extra entries).
func newHarness(t *testing.T, extraHost []string, servers ...mcpconfig.ServerConfig) *harness {
	t.Helper()
	host := append(os.Environ(), extraHost...)
	env := redact.NewEnvFilter(host)
	secrets := redact.NewRegistry()
	secrets.Add(env.Secrets()...)
	logs := &testkit.SyncBuffer{}
	logger := slog.New(redact.NewHandler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), secrets))
	clock := testkit.NewClock(time.Now())
	client := New(Options{Servers: servers, Env: env, Redactor: secrets, Logger: logger,
		Builtins: []string{"send"}, Now: clock.Now})
	t.Cleanup(client.Close)
	return &harness{t: t, client: client, cache: client.cache, secrets: secrets, logs: logs, now: clock}
}

// fakeServer is a server entry that runs the fake with modes, logging to a
// fresh log file whose path it returns.
func fakeServer(t *testing.T, name string, modes ...string) (mcpconfig.ServerConfig, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	l := fakemcp.Command(modes...).WithLog(logPath)
	return mcpconfig.ServerConfig{
		Name:           name,
		Source:         mcpconfig.SourceConfig,
		Origin:         "test",
		Command:        l.Command,
		Args:           l.Args,
		Env:            l.EnvRefs(),
		Enabled:        true,
		StartupTimeout: 10 * time.Second,
		CallTimeout:    10 * time.Second,
		IdleTimeout:    0,
		StderrLevel:    slog.LevelWarn,
	}, logPath
}

func withEnv(cfg mcpconfig.ServerConfig, k, v string) mcpconfig.ServerConfig {
	env := make(map[string]*string, len(cfg.Env)+1)
	for key, val := range cfg.Env {
		env[key] = val
	}
	env[k] = &v
	cfg.Env = env
	return cfg
}

func (h *harness) session(workspace string) *Session {
	h.t.Helper()
	if workspace == "" {
		workspace = h.t.TempDir()
	}
	s, err := h.client.NewSession(workspace, h.t.TempDir())
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// tool finds an exposed tool by its MCP name in server's catalogue.
func (h *harness) tool(server, mcpName string) Tool {
	h.t.Helper()
	cfg, ok := h.client.Server(server)
	if !ok {
		h.t.Fatalf("no server %s", server)
	}
	cat, err := h.cache.get(context.Background(), cfg)
	if err != nil {
		h.t.Fatalf("catalogue of %s: %v", server, err)
	}
	for _, tl := range cat.Tools {
		if tl.MCPName == mcpName {
			return tl
		}
	}
	h.t.Fatalf("server %s has no tool %s", server, mcpName)
	return Tool{}
}

func (h *harness) call(s *Session, tool Tool, args string) Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.Call(ctx, tool, []byte(args))
	if err != nil {
		h.t.Fatalf("call %s: %v", tool.Name, err)
	}
	return res
}

// gone reports whether pid no longer exists at all (not even as a zombie).
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

// running reports whether a discovery of cfg runs.
func (c *catalogCache) running(cfg mcpconfig.ServerConfig) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[cfg.Name+"\x00"+cfg.Digest()]
	return e != nil && !isClosed(e.done)
}
