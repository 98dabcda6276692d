package preset

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func ptr[T any](v T) *T { return &v }

func TestPlaywrightServer(t *testing.T) {
	ws := "${workspace}"
	cases := []struct {
		name    string
		p       Playwright
		command string
		args    []string
	}{
		{"defaults", Playwright{Enabled: ptr(true)}, "npx",
			[]string{"-y", PlaywrightPackage, "--headless", "--browser", "chromium", "--output-dir", ws + "/.playwright-mcp",
				"--user-data-dir", "${private}/browser-profile"}},
		{"headed firefox with device", Playwright{Enabled: ptr(true), Headless: ptr(false), Browser: "firefox",
			ExtraArgs: []string{"--device", "iPhone 15"}}, "npx",
			[]string{"-y", PlaywrightPackage, "--browser", "firefox", "--output-dir", ws + "/.playwright-mcp",
				"--user-data-dir", "${private}/browser-profile", "--device", "iPhone 15"}},
		{"command drops npx -y package", Playwright{Enabled: ptr(true), Command: "playwright-mcp",
			ExtraArgs: []string{"--no-sandbox"}}, "playwright-mcp",
			[]string{"--headless", "--browser", "chromium", "--output-dir", ws + "/.playwright-mcp",
				"--user-data-dir", "${private}/browser-profile", "--no-sandbox"}},
		{"isolated keeps no profile", Playwright{Enabled: ptr(true), ExtraArgs: []string{"--isolated"}}, "npx",
			[]string{"-y", PlaywrightPackage, "--headless", "--browser", "chromium", "--output-dir", ws + "/.playwright-mcp", "--isolated"}},
		{"isolated=true too", Playwright{Enabled: ptr(true), ExtraArgs: []string{"--isolated=true"}}, "npx",
			[]string{"-y", PlaywrightPackage, "--headless", "--browser", "chromium", "--output-dir", ws + "/.playwright-mcp", "--isolated=true"}},
		{"package override", Playwright{Enabled: ptr(true), Package: "@playwright/mcp@0.0.80"}, "npx",
			[]string{"-y", "@playwright/mcp@0.0.80", "--headless", "--browser", "chromium", "--output-dir", ws + "/.playwright-mcp",
				"--user-data-dir", "${private}/browser-profile"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.p.Server()
			if s.Command != tc.command || !slices.Equal(s.Args, tc.args) {
				t.Errorf("argv = %s %q\nwant  %s %q", s.Command, s.Args, tc.command, tc.args)
			}
			startup := 120 * time.Second
			if tc.command == "npx" { // may install the package on its first start
				startup = mcpconfig.DefaultInstallerStartupTimeout
			}
			if s.Name != "playwright" || s.Cwd != ws || s.ToolPrefix != "" || !s.Enabled ||
				s.StartupTimeout != startup || s.CallTimeout != 120*time.Second {
				t.Errorf("server = %+v", s)
			}
		})
	}
	off := Playwright{}.Server()
	if off.Enabled || off.DisabledHint != "set PLAYWRIGHT_ENABLED=true" {
		t.Errorf("disabled preset = %+v", off)
	}
}

func TestStartupLine(t *testing.T) {
	if got := (Playwright{Enabled: ptr(true)}).StartupLine(); got != "MCP: playwright enabled (headless, chromium)" {
		t.Errorf("enabled: %q", got)
	}
	if got := (Playwright{}).StartupLine(); got != "MCP: playwright disabled (set PLAYWRIGHT_ENABLED=true)" {
		t.Errorf("disabled: %q", got)
	}
}

func TestBrowserSection(t *testing.T) {
	with, without := BrowserSection(true, "browser"), BrowserSection(false, "browser")
	if !strings.Contains(with, "`send`") || strings.Contains(without, "send") {
		t.Errorf("send mentioned wrongly:\nwith:\n%s\nwithout:\n%s", with, without)
	}
	if shared := BrowserSection(true, OutputFolder); !strings.Contains(shared, "under .playwright-mcp/") {
		t.Errorf("the shared browser's output folder is not named:\n%s", shared)
	}
	for _, tool := range []string{"browser_snapshot", "browser_take_screenshot", "browser_close"} {
		if !strings.Contains(with, tool) {
			t.Errorf("section lacks %s", tool)
		}
	}
}

// The pinned version appears once in code; the npm pin used by the tests
// and the Dockerfile's build argument must equal it.
func TestPinnedVersionEverywhere(t *testing.T) {
	b, err := os.ReadFile("../../tools/npm/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@playwright/mcp"]; got != PlaywrightVersion {
		t.Errorf("tools/npm/package.json pins @playwright/mcp %s, the preset %s", got, PlaywrightVersion)
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	m := regexp.MustCompile(`(?m)^ARG PLAYWRIGHT_MCP_VERSION=(\S+)`).FindSubmatch(df)
	if m == nil {
		t.Fatal("the Dockerfile has no ARG PLAYWRIGHT_MCP_VERSION=<version>")
	}
	if string(m[1]) != PlaywrightVersion {
		t.Errorf("Dockerfile PLAYWRIGHT_MCP_VERSION=%s, preset %s", m[1], PlaywrightVersion)
	}
}

// The shared browser is one server over HTTP on ${port} for every chat, an
// isolated context each, its storage tools hidden and used to keep each
// chat's state; a CDP endpoint goes in its environment (a token in it stays
// out of the command line) and no local browser flags are passed.
func TestPlaywrightShared(t *testing.T) {
	dir := t.TempDir()
	local := Playwright{Enabled: ptr(true), Shared: ptr(true), Command: "playwright-mcp", ExecutablePath: "/usr/bin/chromium",
		NoSandbox: ptr(true), StateDir: dir}.Server()
	want := []string{"--headless", "--browser", "chromium", "--isolated", "--port", "${port}", "--host", "127.0.0.1",
		"--caps", "storage", "--executable-path", "/usr/bin/chromium", "--no-sandbox",
		"--config", dir + "/playwright-mcp.json"}
	if !local.Shared || local.URL != "http://127.0.0.1:${port}/mcp" || local.Cwd != dir || !slices.Equal(local.Args, want) {
		t.Errorf("shared: shared %v url %q cwd %q args\n%q\nwant\n%q", local.Shared, local.URL, local.Cwd, local.Args, want)
	}
	// The one Host the server accepts is given by the bot at each start,
	// in its environment (@playwright/mcp's --allowed-hosts would win over
	// it, and a command line is readable by every user).
	if local.HostEnv != "PLAYWRIGHT_MCP_ALLOWED_HOSTS" || len(local.Warnings) != 0 {
		t.Errorf("host env %q, warnings %q", local.HostEnv, local.Warnings)
	}
	walled := Playwright{Enabled: ptr(true), Shared: ptr(true), ExtraArgs: []string{"--allowed-hosts=*", "--host", "0.0.0.0"}}.Server()
	if len(walled.Warnings) != 2 || !strings.Contains(walled.Warnings[0], "--allowed-hosts") || !strings.Contains(walled.Warnings[1], "--host") {
		t.Errorf("extra arguments that open the shared server: warnings %q", walled.Warnings)
	}
	if local.State == nil || local.State.File != StateFile || !slices.Contains(local.DisabledTools, local.State.Save) ||
		!slices.Contains(local.DisabledTools, local.State.Restore) || len(local.DisabledTools) != 18 || !slices.Contains(local.DisabledTools, UnsafeCodeTool) {
		t.Errorf("state %+v, hidden %q", local.State, local.DisabledTools)
	}
	if err := local.BeforeStart(mcpconfig.Spawn{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dir + "/playwright-mcp.json")
	if err != nil || !strings.Contains(string(b), "--disable-features=WebUIOmniboxPopup,") || !strings.Contains(string(b), dir+"/"+MaskPasswordsFile) {
		t.Errorf("launch configuration %s (%v)", b, err)
	}

	cdp := Playwright{Enabled: ptr(true), CDPEndpoint: "ws://browser:3000/?token=s3cret", CDPHeader: "Authorization: Bearer t0ken",
		ExecutablePath: "/usr/bin/chromium", NoSandbox: ptr(true), StateDir: dir}
	cfg := cdp.Server()
	if !cfg.Shared || *cfg.Env["PLAYWRIGHT_MCP_CDP_ENDPOINT"] != cdp.CDPEndpoint || *cfg.Env["PLAYWRIGHT_MCP_CDP_HEADERS"] != cdp.CDPHeader {
		t.Errorf("cdp: shared %v env %v", cfg.Shared, cfg.Env)
	}
	line := strings.Join(cfg.Args, " ")
	for _, unwanted := range []string{"s3cret", "t0ken", "--executable-path", "--no-sandbox"} {
		if strings.Contains(line, unwanted) {
			t.Errorf("cdp args hold %q: %s", unwanted, line)
		}
	}
	// The browser elsewhere is not launched here: its configuration holds
	// the password mask only.
	if err := cfg.BeforeStart(mcpconfig.Spawn{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dir + "/playwright-mcp.json"); err != nil || strings.Contains(string(b), "launchOptions") ||
		!strings.Contains(string(b), MaskPasswordsFile) || !strings.Contains(line, "--config "+dir+"/playwright-mcp.json") {
		t.Errorf("cdp launch configuration %s (%v), args %s", b, err, line)
	}
	if got := cdp.StartupLine(); !strings.Contains(got, "CDP endpoint") {
		t.Errorf("startup line %q", got)
	}
}

// browser_run_code_unsafe runs any code in the server's process: hidden
// unless the operator allows it.
func TestPlaywrightUnsafeCodeHidden(t *testing.T) {
	for _, shared := range []bool{false, true} {
		p := Playwright{Enabled: ptr(true), Shared: ptr(shared)}
		if !slices.Contains(p.Server().DisabledTools, UnsafeCodeTool) {
			t.Errorf("shared %v: %s offered by default", shared, UnsafeCodeTool)
		}
		p.AllowUnsafeCode = true
		if slices.Contains(p.Server().DisabledTools, UnsafeCodeTool) {
			t.Errorf("shared %v: %s hidden although allowed", shared, UnsafeCodeTool)
		}
	}
}

// The password mask is written beside the launch configuration for the
// browsers Playwright drives over CDP; the others run without it (and
// their configuration names no file that is not there).
func TestPlaywrightPasswordMask(t *testing.T) {
	for _, tc := range []struct {
		browser string
		mask    bool
	}{{"", true}, {"chromium", true}, {"chrome", true}, {"msedge-beta", true}, {"firefox", false}, {"webkit", false}} {
		dir := t.TempDir()
		cfg := Playwright{Enabled: ptr(true), Browser: tc.browser, StateDir: dir}.Server()
		if err := cfg.BeforeStart(mcpconfig.Spawn{}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(dir + "/playwright-mcp.json")
		script, err := os.ReadFile(dir + "/" + MaskPasswordsFile)
		if got := strings.Contains(string(b), "initPage"); got != tc.mask || (err == nil) != tc.mask {
			t.Errorf("%q: initPage %v, script %v, want %v: %s", tc.browser, got, err, tc.mask, b)
		}
		if tc.mask && string(script) != string(maskPasswords) {
			t.Errorf("%q: the script written differs from the embedded one", tc.browser)
		}
	}
}
