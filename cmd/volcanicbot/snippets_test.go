package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// Snippets of other clients' configurations, as their READMEs give them,
// through `check`.

// Cline's marketplace names a server after its repository: the
// configuration is valid, check discovers it and shows it under that
// name, and says which internal name its tools and files use. Before, the
// whole configuration was refused ("server name must be 1 to 64
// characters from A-Z, …").
func TestCheckTakesAMarketplaceName(t *testing.T) {
	const name = "github.com/upstash/context7-mcp"
	dir := writeSettings(t, map[string][]string{name: {fakemcp.ModeNormal}, "fetch": {fakemcp.ModeNormal}})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	got := out.String()
	if !strings.Contains(got, "configuration: ok") {
		t.Fatalf("configuration refused:\n%s\n%s", got, errOut.String())
	}
	for _, want := range []string{"\n" + name + "  ", `server "` + name + `": the server name "` + name + `" is kept for /mcp; tools, files and logs call the server "github.com_upstash_context7-mcp"`} {
		if !strings.Contains(got, want) {
			t.Errorf("check lacks %q:\n%s", want, got)
		}
	}
	// The fake's tools are in both servers: the refusals name the entry
	// as written and suggest a prefix that frees the names.
	if !strings.Contains(got, `set "toolPrefix" for server "`+name+`" (e.g. "context7_")`) {
		t.Errorf("no usable toolPrefix suggestion for the marketplace name:\n%s", got)
	}
	_ = code // the refused tools fail check; that is another test's
}

// npmTool is a pinned npm package's binary (tools/npm), or a skip when it
// is not installed (a failure in CI).
func npmTool(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("VOLCANIC_TEST_NPM_BIN")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "tools", "npm", "node_modules", ".bin")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (%v): `make test` installs it (npm ci in tools/npm)", p, err)
		}
		t.Skipf("%s is missing: run `make test` (npm ci in tools/npm)", p)
	}
	return p
}

// writeSettingsJSON writes settings.json with servers as given.
func writeSettingsJSON(t *testing.T, servers map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// server-filesystem as its README configures it, with a folder: check says
// it serves that folder in every chat. Before, it claimed the server saw
// only the chat's workspace, which held for neither its first call (the
// folder) nor the chats (the folder was replaced after the first call).
func TestCheckSaysWhatServerFilesystemServes(t *testing.T) {
	notes := t.TempDir()
	dir := writeSettingsJSON(t, map[string]any{
		"filesystem": map[string]any{"command": npmTool(t, "mcp-server-filesystem"), "args": []string{notes}},
	})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	got := out.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, got, errOut.String())
	}
	want := `warning: server "filesystem": server-filesystem: its args name directories of its own (` + notes +
		`): the bot declares no roots to it, so it serves them in every chat, alike`
	if !strings.Contains(got, want) || strings.Contains(got, "sees only the chat's workspace") {
		t.Errorf("check does not say what the server serves:\n%s", got)
	}
}
