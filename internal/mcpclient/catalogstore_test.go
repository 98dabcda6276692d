package mcpclient

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// hangsOnceMarked is the fake as a server that works until marker exists
// and then never answers, under one configuration: the same key in both
// runs.
func hangsOnceMarked(t *testing.T, name, marker string) mcpconfig.ServerConfig {
	t.Helper()
	cfg, _ := fakeServer(t, name, fakemcp.ModeNormal)
	cfg.Args = append([]string{"-c", `if [ -e "$0" ]; then exec sleep 1000; fi; exec "$@"`, marker, cfg.Command}, cfg.Args...)
	cfg.Command = "/bin/sh"
	cfg.StartupTimeout = 2 * time.Second
	return cfg
}

func newStoreClient(t *testing.T, dir string, servers ...mcpconfig.ServerConfig) *Client {
	t.Helper()
	c := New(Options{Servers: servers, Env: redact.NewEnvFilter(os.Environ()), CatalogDir: dir,
		Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(c.Close)
	return c
}

func names(tools []Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// A turn waits at most a few seconds for a server's first discovery: a
// server that never answers holds no turn up for its startup timeout.
func TestToolsWithinDoesNotWaitForAHungServer(t *testing.T) {
	fake, _ := fakeServer(t, "fake", fakemcp.ModeNormal)
	hung, _ := fakeServer(t, "hung", fakemcp.ModeHangOnStart)
	hung.StartupTimeout = time.Minute
	c := newStoreClient(t, t.TempDir(), fake, hung)
	if _, err := c.cache.get(t.Context(), fake); err != nil { // the fake is discovered; hung never will be
		t.Fatal(err)
	}
	start := time.Now()
	tools, _ := c.ToolsWithin(t.Context(), 300*time.Millisecond)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("ToolsWithin took %v with a hung server, want about 300 ms", took)
	}
	if !slices.Contains(names(tools), fakemcp.ToolEcho) {
		t.Errorf("tools %v, want the fake's", names(tools))
	}
	if line := c.Lookup()[1]; !line.Discovering {
		t.Errorf("the hung server: %+v, want it still being discovered", line)
	}
}

// After a restart a server's last tool list, kept on disk, is offered at
// once while it is discovered again; when that discovery fails the
// catalogue says so (its version changes, its tools go). The kept list is
// filtered by the configuration of now, and one kept under another
// configuration is not used.
func TestKeptCatalogueIsOfferedAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp-catalog")
	marker := filepath.Join(t.TempDir(), "hang")
	cfg := hangsOnceMarked(t, "flaky", marker)

	first := newStoreClient(t, dir, cfg)
	if cats := first.Discover(t.Context()); cats[0].Err != nil {
		t.Fatal(cats[0].Err)
	}
	first.Close()
	if fi, err := os.Stat(filepath.Join(dir, "flaky.tools.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept list: %v (%v), want a 0600 file", fi, err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil { // from now on it never answers
		t.Fatal(err)
	}

	hidden := cfg
	hidden.DisabledTools = []string{fakemcp.ToolEcho}
	prefixed := cfg
	prefixed.ToolPrefix = "other"
	for _, tt := range []struct {
		name  string
		cfg   mcpconfig.ServerConfig
		want  []string // among the tools offered at once
		never []string
	}{
		{"kept", cfg, []string{fakemcp.ToolEcho, fakemcp.ToolSleep}, nil},
		{"filtered by the configuration of now", hidden, []string{fakemcp.ToolSleep}, []string{fakemcp.ToolEcho}},
		{"another configuration", prefixed, nil, []string{fakemcp.ToolEcho, "other_" + fakemcp.ToolEcho}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newStoreClient(t, dir, tt.cfg)
			version := c.CatalogVersion()
			start := time.Now()
			tools, _ := c.ToolsWithin(t.Context(), 100*time.Millisecond)
			if took := time.Since(start); took > time.Second {
				t.Errorf("ToolsWithin took %v", took)
			}
			got := names(tools)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("offered %v, want %s among them", got, w)
				}
			}
			for _, n := range tt.never {
				if slices.Contains(got, n) {
					t.Errorf("offered %v, want no %s", got, n)
				}
			}
			if len(tt.want) == 0 {
				return
			}
			if st := statusOf(t, c.mustSession(t), "flaky"); st.State != chat.ServerNotStarted || st.DiscoveryError != "" || st.Discovering || len(st.Offered) == 0 {
				t.Errorf("/mcp while the kept list is offered: %+v", st)
			}
			testkit.WaitFor(t, "the discovery to fail", 20*time.Second, func() bool { return c.CatalogVersion() != version })
			if tools, _ := c.ToolsWithin(t.Context(), 0); len(tools) != 0 {
				t.Errorf("after the failed discovery: %v, want none", names(tools))
			}
		})
	}
}

func (c *Client) mustSession(t *testing.T) *Session {
	t.Helper()
	s, err := c.NewSession(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A kept file that is not the bot's (not JSON, another server's, a link)
// is not offered.
func TestKeptCatalogueIgnoresWhatIsNotOurs(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := hangsOnceMarked(t, "flaky", marker)
	good := filepath.Join(t.TempDir(), "good")
	if err := os.MkdirAll(good, 0o700); err != nil {
		t.Fatal(err)
	}
	newCatalogStore(good, nil).save(cfg, ServerInfo{Name: "fake"}, nil)
	raw, _ := os.ReadFile(filepath.Join(good, "flaky.tools.json"))
	for name, write := range map[string]func(path string) error{
		"not JSON": func(p string) error { return os.WriteFile(p, []byte("{not json"), 0o600) },
		"another server's": func(p string) error {
			return os.WriteFile(p, []byte(strings.Replace(string(raw), `"server":"flaky"`, `"server":"other"`, 1)), 0o600)
		},
		"a link": func(p string) error { return os.Symlink(filepath.Join(good, "flaky.tools.json"), p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := write(filepath.Join(dir, "flaky.tools.json")); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := newCatalogStore(dir, nil).load(cfg); ok {
				t.Error("loaded")
			}
		})
	}
	if _, _, ok := newCatalogStore(good, nil).load(cfg); !ok {
		t.Error("the bot's own file was not loaded")
	}
}

// A server that needs a login, and whose tools only a version before the
// catalogue store kept (beside its token, mcp-auth/<name>.tools.json),
// keeps offering them: an upgrade loses no tools.
func TestNeedsLoginOffersTheToolsAnOlderVersionKept(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	data := t.TempDir()
	auth := filepath.Join(data, "mcp-auth")
	if err := os.MkdirAll(auth, 0o700); err != nil {
		t.Fatal(err)
	}
	old := `{"Server":"remote","Tools":[{"Server":"remote","MCPName":"notes","Name":"notes","Description":"Notes.","InputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(auth, "remote.tools.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()), AuthDir: auth,
		CatalogDir: filepath.Join(data, "mcp-catalog"), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(c.Close)
	tools, _ := c.Tools(t.Context())
	if got := names(tools); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("tools %v, want the ones the older version kept", got)
	}
}

// A known secret a server put in its tool list (a description, a schema's
// default) is not written to the kept list.
func TestKeptCatalogueHoldsNoSecret(t *testing.T) {
	const secret = "pg-s3cret-0123456789abcdef"
	tools := []map[string]any{
		{"name": "query", "description": "connects with password " + secret, "inputSchema": map[string]any{"type": "object"}},
		{"name": "dump", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"pw": map[string]any{"type": "string", "default": secret}}}},
	}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"tools": tools}})
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := shServer("db", `read -r l; cat "$0"; exec sleep 1000`)
	cfg.Args = append(cfg.Args, file)
	cfg.Env = map[string]*string{"PGPASSWORD": ptrTo("${env:PGPASSWORD}")}
	env := redact.NewEnvFilter(append(os.Environ(), "PGPASSWORD="+secret))
	secrets := redact.NewRegistry()
	secrets.Add(env.Secrets()...)
	dir := filepath.Join(t.TempDir(), "mcp-catalog")
	c := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: env, Redactor: secrets, CatalogDir: dir, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(c.Close)
	if cats := c.Discover(t.Context()); cats[0].Err != nil {
		t.Fatal(cats[0].Err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "db.tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[REDACTED]") {
		t.Errorf("the kept list:\n%s", b)
	}
	// Nor what the model is offered: the schema it gets is made from the
	// redacted one.
	for _, e := range c.OfferedTools() {
		if strings.Contains(e.Description+string(e.Schema)+string(e.InputSchema), secret) {
			t.Errorf("the model is offered %s with the secret: %s %s", e.Name, e.Description, e.Schema)
		}
	}
}
