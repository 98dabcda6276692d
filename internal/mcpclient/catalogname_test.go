package mcpclient

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// entryNamed is cfg's command as another client's settings name it
// (Cline: "github.com/upstash/context7-mcp"), through the configuration's
// own parser: the server gets a safe internal name and keeps its label.
func entryNamed(t *testing.T, name string, cfg mcpconfig.ServerConfig) mcpconfig.ServerConfig {
	t.Helper()
	env := map[string]string{}
	for k, v := range cfg.Env {
		if v != nil {
			env[k] = *v
		}
	}
	raw, err := json.Marshal(map[string]any{"command": cfg.Command, "args": cfg.Args, "env": env,
		"startupTimeoutSeconds": cfg.StartupTimeout.Seconds()})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := mcpconfig.ParseEntry(name, raw, mcpconfig.SourceConfig, "test")
	if err != nil {
		t.Fatal(err)
	}
	return entry
}

// filesUnder is every file and folder under root but root itself, by
// its path relative to root.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A server named as other clients name theirs keeps its list under its
// safe internal name (github.com_upstash_context7-mcp.tools.json), never
// under the name as written: no folders github.com/upstash/ in the store,
// nothing outside it; and the next start offers the list at once.
func TestKeptCatalogueIsNamedAfterTheInternalName(t *testing.T) {
	const label = "github.com/upstash/context7-mcp"
	data := t.TempDir()
	dir := filepath.Join(data, "mcp-catalog")
	marker := filepath.Join(t.TempDir(), "hang")
	cfg := entryNamed(t, label, hangsOnceMarked(t, "x", marker))
	if cfg.Name != "github.com_upstash_context7-mcp" || cfg.Label != label {
		t.Fatalf("the entry's names: %q (label %q)", cfg.Name, cfg.Label)
	}

	first := newStoreClient(t, dir, cfg)
	if cats := first.Discover(t.Context()); cats[0].Err != nil {
		t.Fatal(cats[0].Err)
	}
	first.Close()
	want := []string{"mcp-catalog", filepath.Join("mcp-catalog", "github.com_upstash_context7-mcp.tools.json")}
	if got := filesUnder(t, data); !slices.Equal(got, want) {
		t.Errorf("the data directory holds %q, want %q", got, want)
	}

	if err := os.WriteFile(marker, nil, 0o600); err != nil { // from now on it never answers
		t.Fatal(err)
	}
	c := newStoreClient(t, dir, cfg)
	tools, _ := c.ToolsWithin(t.Context(), 100*time.Millisecond)
	if !slices.Contains(names(tools), fakemcp.ToolEcho) {
		t.Errorf("offered %v after a restart, want the kept list's %s", names(tools), fakemcp.ToolEcho)
	}
}

// The store takes only a safe server name for a file: a configuration
// built by hand (not through mcpconfig) with a name that would be a path
// ("../x", "a/b") neither writes a file anywhere nor reads one planted
// where that path leads.
func TestKeptCatalogueRefusesANameThatIsAPath(t *testing.T) {
	for _, name := range []string{"../escape", "a/b", "github.com/upstash/context7-mcp", "..", ""} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "data", "mcp-catalog")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg, _ := fakeServer(t, "x", fakemcp.ModeNormal)
			cfg.Name = name
			tool := json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)
			newCatalogStore(dir, nil).save(cfg, ServerInfo{Name: "fake"}, []json.RawMessage{tool})
			if got := filesUnder(t, root); !slices.Equal(got, []string{"data", filepath.Join("data", "mcp-catalog")}) {
				t.Errorf("saving under %q left %q", name, got)
			}

			// A file where the name leads, as the store would have
			// written it: not read.
			planted := filepath.Join(dir, name+".tools.json")
			if err := os.MkdirAll(filepath.Dir(planted), 0o700); err != nil {
				t.Fatal(err)
			}
			good := cfg
			good.Name = "x"
			newCatalogStore(dir, nil).save(good, ServerInfo{Name: "fake"}, []json.RawMessage{tool})
			b, err := os.ReadFile(filepath.Join(dir, "x.tools.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sc storedCatalog
			if err := json.Unmarshal(b, &sc); err != nil {
				t.Fatal(err)
			}
			sc.Server, sc.Key = name, cfg.Digest()
			if b, err = json.Marshal(sc); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(planted, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := newCatalogStore(dir, nil).load(cfg); ok {
				t.Errorf("a list was read for %q from %s", name, planted)
			}

			// Nor where an older version kept it (mcp-auth/<name>.tools.json).
			auth := filepath.Join(root, "data", "mcp-auth")
			old := filepath.Join(auth, name+".tools.json")
			if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
				t.Fatal(err)
			}
			b, _ = json.Marshal(Catalog{Server: name, Tools: []Tool{{Server: name, MCPName: "echo", Name: "echo"}}})
			if err := os.WriteFile(old, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, ok := newAuthStore(auth).savedCatalog(name); ok {
				t.Errorf("an older version's list was read for %q from %s", name, old)
			}
		})
	}
}
