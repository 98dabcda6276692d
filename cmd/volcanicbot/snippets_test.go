package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
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
		"filesystem": map[string]any{"command": testkit.NPMBin(t, "mcp-server-filesystem"), "args": []string{notes}},
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

// A reference never closed is refused by check with the field and the
// fix (and so at start, which loads the same configuration); a nested
// default is valid.
func TestCheckRefusesAnUnclosedReference(t *testing.T) {
	dir := writeSettingsJSON(t, map[string]any{
		"notes": map[string]any{"command": "/bin/true", "args": []string{"--dir", "${PANEL_UNSET:-${workspace}/x"}},
	})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	if code != 1 || !strings.Contains(out.String(), "configuration: invalid") ||
		!strings.Contains(out.String(), `server "notes": args[1]: a ${ is not closed (write $${ for a literal ${)`) {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
}

// A server whose every tool was refused offers nothing: its LOADED column
// says so ("-", not "all"), and the total counts only what a row shows,
// in the tokens too — the resource tools its resources still bring have a
// row of their own. Before: LOADED "all", and "2 tools offered …, about 0
// tokens" with no row holding them.
func TestCheckCountsWhatItShows(t *testing.T) {
	cats := []mcpclient.ServerCatalog{{Config: mcpconfig.ServerConfig{Name: "docs", Enabled: true},
		Catalog: mcpclient.Catalog{Server: "docs", ServerInfo: mcpclient.ServerInfo{Resources: true},
			Tools: mcpclient.ExposeTools("docs", "", []mcpclient.Tool{{MCPName: "send"}, {MCPName: "read"}})}}}
	tokens := func(ts []mcpclient.Tool) int { return 100 * len(ts) }
	var out bytes.Buffer
	printCatalogs(&out, cats, tokens, func([]mcpclient.Tool) session.ToolPlan { return session.ToolPlan{} })
	got := out.String()
	if !regexp.MustCompile(`(?m)^docs\s+refused\s+0 \(\+2 refused\)\s+0\s+-\s`).MatchString(got) {
		t.Errorf("docs row: want refused, 0 tools, 0 tokens, LOADED -\n%s", got)
	}
	if !regexp.MustCompile(`(?m)^\(resources\)\s+ok\s+2\s+200\s+all\s`).MatchString(got) ||
		!strings.Contains(got, "  (resources): list_mcp_resources, read_mcp_resource") {
		t.Errorf("no row for the resource tools (2 tools, 200 tokens):\n%s", got)
	}
	if !strings.Contains(got, "2 tools offered to the model, about 200 tokens per request") {
		t.Errorf("the total does not add up the rows:\n%s", got)
	}

	// One tool: "1 tool", not "1 tools".
	one := []mcpclient.ServerCatalog{{Config: mcpconfig.ServerConfig{Name: "one", Enabled: true},
		Catalog: mcpclient.Catalog{Server: "one", Tools: mcpclient.ExposeTools("one", "", []mcpclient.Tool{{MCPName: "echo"}})}}}
	out.Reset()
	printCatalogs(&out, one, tokens, func([]mcpclient.Tool) session.ToolPlan { return session.ToolPlan{} })
	if !strings.Contains(out.String(), "\n1 tool offered to the model, about 100 tokens") {
		t.Errorf("one tool:\n%s", out.String())
	}
}

// The docs name the browser preset's always-loaded tools as the preset
// has them: configuration.md listed browser_take_screenshot too (6 tools)
// where check and browser.md say 5.
func TestDocsNameTheBrowserCore(t *testing.T) {
	names := regexp.MustCompile("`(browser_[a-z_]+)`")
	for _, doc := range []struct{ file, marker string }{
		{"configuration.md", "| `alwaysLoad` |"},
		{"browser.md", "its **core** comes with its schemas"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc.file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		i := strings.Index(text, doc.marker)
		if i < 0 {
			t.Fatalf("%s: no %q", doc.file, doc.marker)
		}
		// The list ends with the sentence (browser.md) or the table cell
		// (configuration.md) that names it.
		end := strings.Index(text[i:], "alwaysLoad`)")
		if doc.file == "configuration.md" {
			end = strings.Index(text[i:], ") |")
		}
		if end < 0 {
			t.Fatalf("%s: the list after %q does not end", doc.file, doc.marker)
		}
		var got []string
		for _, m := range names.FindAllStringSubmatch(text[i:i+end], -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, preset.PlaywrightCore) {
			t.Errorf("%s lists %q as always loaded; the preset has %q", doc.file, got, preset.PlaywrightCore)
		}
	}
}

// @playwright/mcp configured as its README gives it (here the pinned
// package's binary for `npx @playwright/mcp@latest`) looks for Google
// Chrome: check opens a page with every entry that runs @playwright/mcp,
// not only the preset, so that it fails there and not at the first
// chat's first call. Before, check listed the tools and passed.
func TestCheckStartsTheBrowserOfAnyPlaywrightEntry(t *testing.T) {
	env := browserEnv(t) // skips without the pinned package and Chromium
	var bin, chromium string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PLAYWRIGHT_COMMAND="); ok {
			bin = v
		}
		if v, ok := strings.CutPrefix(kv, "PLAYWRIGHT_EXECUTABLE_PATH="); ok {
			chromium = v
		}
	}
	check := func(entry map[string]any) (int, string) {
		t.Helper()
		dir := writeSettingsJSON(t, map[string]any{"playwright-readme": entry})
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"check"}, &out, &errOut, append(baseEnviron(t, dir), "HOME="+t.TempDir()))
		return code, out.String()
	}
	code, out := check(map[string]any{"command": bin})
	if code != 1 || !strings.Contains(out, "failed: playwright-readme: the browser does not start") ||
		!strings.Contains(out, "--executable-path") {
		t.Errorf("the README's snippet without a browser: exit %d\n%s", code, out)
	}
	code, out = check(map[string]any{"command": bin,
		"args": []string{"--browser", "chromium", "--executable-path", chromium, "--headless", "--no-sandbox"}})
	if code != 0 || !strings.Contains(out, "browser: playwright-readme: ok (opened about:blank)") {
		t.Errorf("with the browser: exit %d\n%s", code, out)
	}
}
