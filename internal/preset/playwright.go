// Package preset holds typed shortcuts that expand into MCP server
// configurations: today the Playwright browser (playwright.go), and
// everything that knows @playwright/mcp's output and the browser's
// policy, so that no other package need:
//   - its page snapshots: the older ones of a tab left out of a request
//     (snapshots.go), its files named for read and a console entry's
//     line anchor (files.go);
//   - its storage state (storagestate.go), its profile lock (profile.go)
//     and the script that masks password fields (maskpasswords.cjs);
//   - whether the chats share one browser, and how many run at once
//     (mode.go).
//
// The MCP client's inlining of linked files (mcpclient/inline.go) is not
// here: it serves any server that links to a text file it wrote.
package preset

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// PlaywrightPackage is the pinned @playwright/mcp: the single source of
// truth for its version. The Dockerfile's ARG PLAYWRIGHT_MCP_VERSION and
// tools/npm/package.json must match it (a test checks both).
const PlaywrightPackage = "@playwright/mcp@" + PlaywrightVersion

// PlaywrightVersion is the pinned @playwright/mcp version.
const PlaywrightVersion = "0.0.83"

// PlaywrightServer is the server name the preset adds.
const PlaywrightServer = "playwright"

// The call check makes to see the browser start (discovery lists the tools
// without starting one), and the call that closes it again.
const (
	PlaywrightProbeTool = "browser_navigate"
	PlaywrightProbeArgs = `{"url":"about:blank"}`
	PlaywrightCloseTool = "browser_close"
)

// UserBrowserHint is what check says when a browser of an entry of the
// user's own that runs @playwright/mcp does not start.
const UserBrowserHint = "@playwright/mcp looks for Google Chrome unless told otherwise: add \"--browser\", \"chromium\", " +
	"\"--executable-path\", \"/usr/bin/chromium\" and \"--headless\" to its args (and \"--no-sandbox\" as root or in a " +
	"container), or use the preset instead (PLAYWRIGHT_ENABLED=true)."

// RunsPlaywright reports whether a server entry runs @playwright/mcp: the
// preset, or a command line that names the package (npx @playwright/mcp@latest)
// or its binary (playwright-mcp, mcp-server-playwright).
func RunsPlaywright(c mcpconfig.ServerConfig) bool {
	if c.Source == mcpconfig.SourcePreset && c.Name == PlaywrightServer {
		return true
	}
	for _, s := range append([]string{c.Command}, c.Args...) {
		base := filepath.Base(s)
		if strings.HasPrefix(s, "@playwright/mcp") || strings.Contains(s, "/@playwright/mcp/") ||
			base == "playwright-mcp" || base == "mcp-server-playwright" {
			return true
		}
	}
	return false
}

// PlaywrightCore are the browser tools offered with their schemas even when
// tool search defers the rest (the server's alwaysLoad): what nearly every
// browsing task uses, about 540 tokens. The others are found with
// tool_search, or loaded by a call by name; browser_take_screenshot is one
// of them — its schema is the heaviest (about 290 tokens), and the prompt
// section says how to call it.
var PlaywrightCore = []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_close"}

// BrowserStartHint is what check says when the browser does not start.
const BrowserStartHint = "Set PLAYWRIGHT_EXECUTABLE_PATH to the browser (e.g. /usr/bin/chromium) and, as root or in a container, " +
	"PLAYWRIGHT_NO_SANDBOX=true; PLAYWRIGHT_EXTRA_ARGS only adds to those."

// PlaywrightHint is what /mcp shows for the disabled preset.
const PlaywrightHint = "set PLAYWRIGHT_ENABLED=true"

// Playwright is the preset's settings. Nil pointers and empty strings mean
// "not set"; the caller resolves config-over-environment precedence.
type Playwright struct {
	Enabled   *bool
	Headless  *bool    // default true
	Browser   string   // default chromium
	ExtraArgs []string // appended as given
	Command   string   // run this binary instead of npx -y <package>
	Package   string   // npm spec for npx; default PlaywrightPackage
	// ExecutablePath is the browser binary (--executable-path), e.g.
	// Debian's /usr/bin/chromium; empty: Playwright's own browser.
	ExecutablePath string
	// NoSandbox runs the browser without its sandbox (--no-sandbox), which
	// a container needs; nil means no.
	NoSandbox *bool
	// MaxBrowsers is the most browsers (server processes; with Shared, the
	// chats' browser contexts) that run at once across every chat (the
	// server's maxLive); 0: no ceiling.
	MaxBrowsers int
	// Shared runs one @playwright/mcp and one browser for every chat, each
	// chat in a browser context of its own (isolated: its cookies, storage
	// and tabs are its own, saved in its private folder when it stops and
	// restored when it starts), instead of a server and a browser per chat.
	// Nil means no (see IsShared).
	Shared *bool
	// CDPEndpoint points every chat at a browser that runs elsewhere (a
	// Chromium sidecar, browserless, a Playwright grid), over the Chrome
	// DevTools Protocol: the browser is shared, each chat a context of its
	// own, and no local browser is launched. It implies Shared.
	CDPEndpoint string
	// CDPHeader is one "Name: value" header sent when connecting to
	// CDPEndpoint (a token).
	CDPHeader string
	// StateDir is the bot's own folder for the browser: the shared server's
	// working directory and the launch configuration (the lean Chromium
	// flags); empty: Playwright's own launch flags, and the shared server
	// runs in the temporary directory.
	StateDir string
	// AllowUnsafeCode offers the model browser_run_code_unsafe, which runs
	// any JavaScript in the server's process (@playwright/mcp calls it
	// "RCE-equivalent": other chats' files, and with the shared browser
	// their contexts, are within its reach). Hidden unless set.
	AllowUnsafeCode bool
}

// UnsafeCodeTool is @playwright/mcp's tool that runs any code in its
// process.
const UnsafeCodeTool = "browser_run_code_unsafe"

// hidden are the tools the preset keeps from the model.
func (p Playwright) hidden(more ...string) []string {
	var out []string
	if !p.AllowUnsafeCode {
		out = append(out, UnsafeCodeTool)
	}
	return append(out, more...)
}

// IsShared reports whether every chat shares one server and browser:
// Shared, or a CDP endpoint.
func (p Playwright) IsShared() bool { return (p.Shared != nil && *p.Shared) || p.CDPEndpoint != "" }

// Storage tools of @playwright/mcp's storage capability. The shared
// browser turns it on to save and restore each chat's state and keeps the
// tools from the model.
var storageTools = []string{
	"browser_cookie_clear", "browser_cookie_delete", "browser_cookie_get", "browser_cookie_list", "browser_cookie_set",
	"browser_localstorage_clear", "browser_localstorage_delete", "browser_localstorage_get", "browser_localstorage_list",
	"browser_localstorage_set", "browser_sessionstorage_clear", "browser_sessionstorage_delete", "browser_sessionstorage_get",
	"browser_sessionstorage_list", "browser_sessionstorage_set", "browser_set_storage_state", "browser_storage_state",
}

// StateFile is where the shared browser keeps a chat's cookies and local
// storage between its stops, in the chat's private folder (chatdir).
const StateFile = "browser-state.json"

// ProfileDir is the per-chat browser's profile (cookies, site logins), in
// the chat's private folder.
const ProfileDir = "browser-profile"

// OutputFolder is where the browser saves what it names itself
// (downloads, snapshots, console logs), in each chat's workspace: the
// server's default folder under the chat's root, which the shared browser
// uses and the per-chat one is given (--output-dir).
const OutputFolder = ".playwright-mcp"

// legacyOutputFolder is where the per-chat browser of earlier versions
// saved what it named itself, beside the screenshots the model names
// (browser/<name>.png).
const legacyOutputFolder = "browser"

// OutputDir is the workspace folder of the files the browser names itself.
func (p Playwright) OutputDir() string { return OutputFolder }

// autoNamed matches the names @playwright/mcp gives the files it names
// itself: <prefix>-<ISO time, ':' and '.' as '-'>.<ext>, such as
// page-2026-03-01T12-00-00-000Z.yml or console-….log.
var autoNamed = regexp.MustCompile(`^[a-z]+-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z(\.[a-z0-9]+)?$`)

// output are the browser's folders of its own files, for the chat's disk
// budget: everything in OutputFolder, and the files it named itself in the
// per-chat browser's earlier folder (the screenshots the model named
// there are not).
func output() []mcpconfig.OutputDir {
	return []mcpconfig.OutputDir{{Dir: OutputFolder}, {Dir: legacyOutputFolder, Match: autoNamed.MatchString}}
}

// IsEnabled reports whether the preset is on.
func (p Playwright) IsEnabled() bool { return p.Enabled != nil && *p.Enabled }

// IsHeadless reports whether the browser runs headless (the default).
func (p Playwright) IsHeadless() bool { return p.Headless == nil || *p.Headless }

// BrowserName is the --browser value.
func (p Playwright) BrowserName() string {
	if p.Browser != "" {
		return p.Browser
	}
	return "chromium"
}

// Server expands the preset into the playwright server entry. A disabled
// preset gives a disabled entry, so /mcp can say how to turn it on.
//
//	npx -y @playwright/mcp@<pinned> [--headless] --browser <b>
//	    --output-dir ${workspace}/.playwright-mcp
//	    --user-data-dir ${private}/browser-profile
//	    [--executable-path <path>] [--no-sandbox] <extra args>
//
// --user-data-dir is left out when the extra arguments contain --isolated.
func (p Playwright) Server() mcpconfig.ServerConfig {
	if p.IsShared() {
		return p.sharedServer()
	}
	cmd, args := "npx", []string{"-y", p.pkg()}
	startup := mcpconfig.DefaultInstallerStartupTimeout // npx may install the package first
	if p.Command != "" {
		cmd, args, startup = p.Command, nil, 120*time.Second
	}
	if p.IsHeadless() {
		args = append(args, "--headless")
	}
	args = append(args, "--browser", p.BrowserName(), "--output-dir", "${workspace}/"+OutputFolder)
	if !isolated(p.ExtraArgs) {
		args = append(args, "--user-data-dir", "${private}/"+ProfileDir)
	}
	args = append(p.launchArgs(args), p.ExtraArgs...)
	return mcpconfig.ServerConfig{
		Name:           PlaywrightServer,
		Source:         mcpconfig.SourcePreset,
		Origin:         "preset playwright",
		Command:        cmd,
		Args:           args,
		Cwd:            "${workspace}",
		Enabled:        p.IsEnabled(),
		StartupTimeout: startup,
		CallTimeout:    120 * time.Second,
		IdleTimeout:    mcpconfig.DefaultIdleTimeout,
		StderrLevel:    mcpconfig.DefaultStderrLevel,
		DisabledHint:   PlaywrightHint,
		BeforeStart: func(sp mcpconfig.Spawn) error {
			if err := p.writeLaunchConfig(); err != nil {
				return err
			}
			return clearStaleProfileLock(sp)
		},
		MaxLive:       p.MaxBrowsers,
		Memory:        mcpconfig.Footprint{PerLive: BrowserMemory},
		ProcessNoun:   "browser",
		DisabledTools: p.hidden(),
		Output:        output(),
		PrewarmOnURL:  true,
		WarmCall:      warmCall,
		AlwaysLoad:    slices.Clone(PlaywrightCore),
	}
}

// What the browser is assumed to take, for the memory budget
// (mcpclient.SizeCeilings): with a browser per chat, BrowserMemory each;
// shared, SharedBrowserMemory for the one server and Chromium and
// ContextMemory for each chat's context (docs/performance.md: 485 MiB for
// the first browsing chat, 43–46 MiB for each other on ordinary pages, 130
// MiB more for a heavy one; ~250 MiB a browser per chat). With a CDP
// endpoint the browser is elsewhere: the server's node alone, and no
// ceiling.
const (
	BrowserMemory       = 512 << 20
	SharedBrowserMemory = 512 << 20
	ContextMemory       = 128 << 20
	cdpServerMemory     = 128 << 20
)

func (p Playwright) sharedMemory() mcpconfig.Footprint {
	if p.CDPEndpoint != "" {
		return mcpconfig.Footprint{Fixed: cdpServerMemory}
	}
	return mcpconfig.Footprint{Fixed: SharedBrowserMemory, PerLive: ContextMemory}
}

// sharedServer is the shared browser: one @playwright/mcp over HTTP on
// ${port} for every chat, each chat's session an isolated browser context
// whose root is the chat's workspace.
//
//	npx -y @playwright/mcp@<pinned> [--headless] --browser <b> --isolated
//	    --port ${port} --host 127.0.0.1 --caps storage
//	    [--executable-path <path>] [--no-sandbox] [--config <launch flags>] <extra args>
//
// Its environment's PLAYWRIGHT_MCP_ALLOWED_HOSTS is, at each start, a
// random name only the bot's connections send as their Host (HostEnv):
// the server refuses every other request, so a page its browser shows
// cannot open a session on it (which would reach every chat's context).
// With a CDP endpoint, PLAYWRIGHT_MCP_CDP_ENDPOINT (and _HEADERS) in its
// environment point it at that browser instead of launching one.
func (p Playwright) sharedServer() mcpconfig.ServerConfig {
	cmd, args := "npx", []string{"-y", p.pkg()}
	startup := mcpconfig.DefaultInstallerStartupTimeout
	if p.Command != "" {
		cmd, args, startup = p.Command, nil, 120*time.Second
	}
	if p.IsHeadless() {
		args = append(args, "--headless")
	}
	args = append(args, "--browser", p.BrowserName(), "--isolated",
		"--port", "${port}", "--host", "127.0.0.1", "--caps", "storage")
	env := map[string]*string{}
	if p.CDPEndpoint != "" {
		env["PLAYWRIGHT_MCP_CDP_ENDPOINT"] = &p.CDPEndpoint
		if p.CDPHeader != "" {
			env["PLAYWRIGHT_MCP_CDP_HEADERS"] = &p.CDPHeader
		}
	}
	args = append(p.launchArgs(args), p.ExtraArgs...)
	cwd := p.StateDir
	if cwd == "" {
		cwd = filepath.Join(os.TempDir(), "volcanicbot-browser")
	}
	return mcpconfig.ServerConfig{
		Name:           PlaywrightServer,
		Source:         mcpconfig.SourcePreset,
		Origin:         "preset playwright (shared)",
		Command:        cmd,
		Args:           args,
		Env:            env,
		Cwd:            cwd,
		URL:            "http://127.0.0.1:${port}/mcp",
		Shared:         true,
		HostEnv:        allowedHostsEnv,
		Warnings:       overridesWall(p.ExtraArgs),
		Enabled:        p.IsEnabled(),
		StartupTimeout: startup,
		CallTimeout:    120 * time.Second,
		IdleTimeout:    mcpconfig.DefaultIdleTimeout,
		StderrLevel:    mcpconfig.DefaultStderrLevel,
		DisabledHint:   PlaywrightHint,
		DisabledTools:  p.hidden(storageTools...),
		State: &mcpconfig.StateTools{Save: "browser_storage_state", Restore: "browser_set_storage_state", File: StateFile,
			Valid: validStorageState, Close: PlaywrightCloseTool},
		Output:       output(),
		BeforeStart:  func(mcpconfig.Spawn) error { return p.writeLaunchConfig() },
		MaxLive:      p.MaxBrowsers,
		Memory:       p.sharedMemory(),
		ProcessNoun:  "browser",
		PrewarmOnURL: true,
		WarmCall:     warmCall,
		AlwaysLoad:   slices.Clone(PlaywrightCore),
	}
}

// allowedHostsEnv is @playwright/mcp's variable of the hosts its HTTP
// listener accepts. Its command line's --allowed-hosts would win over it.
const allowedHostsEnv = "PLAYWRIGHT_MCP_ALLOWED_HOSTS"

// overridesWall warns about extra arguments that would replace the shared
// server's allowed host (or where it listens), which keeps pages from it.
func overridesWall(extra []string) []string {
	var out []string
	for _, a := range extra {
		for _, flag := range []string{"--allowed-hosts", "--host", "--port"} {
			if a == flag || strings.HasPrefix(a, flag+"=") {
				out = append(out, fmt.Sprintf("PLAYWRIGHT_EXTRA_ARGS has %s, which replaces what the shared browser's server is given: "+
					"with another allowed host or address, a page the browser shows may reach the server and every chat's context", flag))
			}
		}
	}
	return out
}

// warmCall opens the browser (and the chat's context) of a prewarmed
// server: listing the tabs starts it and changes nothing.
var warmCall = &mcpconfig.ToolCall{Tool: "browser_tabs", Args: json.RawMessage(`{"action":"list"}`)}

// leanFeatures are the Chromium features the bot's browsers run without.
// Given as launch arguments they replace the list Playwright passes
// (Chromium takes the last --disable-features), so it holds what a headless
// agent needs off, for itself:
//   - the address bar's popups, which Chromium renders as web pages — a
//     renderer process of ~40 MB for every window, every chat's context
//     included (WebUIOmniboxPopup, WebUIOmniboxAimPopup, WebUIOmniboxFullPopup);
//   - requests to Google nobody asked for (OptimizationHints,
//     NetworkTimeServiceQuerying, AimEnabled, MediaRouter,
//     DialMediaRouteProvider, GlobalMediaControls, LensOverlay) and the
//     translate bubble (Translate);
//   - what Playwright's automation relies on (PaintHolding: a screenshot
//     right after a navigation shows the new page;
//     AvoidUnnecessaryBeforeUnloadCheckSync: closing a page does not hang;
//     BlockOriginHeaderModificationOnRedirect: request routing of
//     --allowed-origins and --blocked-origins works on redirects).
var leanFeatures = []string{
	"WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup",
	"OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "MediaRouter", "DialMediaRouteProvider",
	"GlobalMediaControls", "LensOverlay", "Translate",
	"PaintHolding", "AvoidUnnecessaryBeforeUnloadCheckSync", "BlockOriginHeaderModificationOnRedirect",
}

// launchArgs appends how the browser is launched here. What the deployment
// needs has settings of its own, so that the user's extra arguments add to
// it rather than replace it.
func (p Playwright) launchArgs(args []string) []string {
	if p.CDPEndpoint == "" {
		if p.ExecutablePath != "" {
			args = append(args, "--executable-path", p.ExecutablePath)
		}
		if p.NoSandbox != nil && *p.NoSandbox {
			args = append(args, "--no-sandbox")
		}
	}
	if p.StateDir != "" {
		args = append(args, "--config", p.launchConfigPath())
	}
	return args
}

func (p Playwright) launchConfigPath() string {
	return filepath.Join(p.StateDir, "playwright-mcp.json")
}

// MaskPasswordsFile is the script, in StateDir, that keeps the values of
// password fields out of page snapshots (see maskpasswords.cjs).
const MaskPasswordsFile = "mask-passwords.cjs"

//go:embed maskpasswords.cjs
var maskPasswords []byte

// masksPasswords reports whether the browser's snapshots hide password
// values: the script needs the Chrome DevTools Protocol, which Playwright
// speaks to Chromium-based browsers only.
func (p Playwright) masksPasswords() bool {
	if p.CDPEndpoint != "" {
		return true
	}
	switch name := p.BrowserName(); {
	case name == "chromium", name == "chrome", name == "msedge", strings.HasPrefix(name, "chrome-"), strings.HasPrefix(name, "msedge-"):
		return true
	}
	return false
}

// writeLaunchConfig writes, when StateDir is set, the configuration
// @playwright/mcp reads with --config: the lean Chromium flags for a
// browser it launches, and the script that masks password fields in
// snapshots, which it runs for every tab.
func (p Playwright) writeLaunchConfig() error {
	if p.StateDir == "" {
		return nil
	}
	browser := map[string]any{}
	if p.CDPEndpoint == "" {
		browser["launchOptions"] = map[string]any{"args": []string{"--disable-features=" + strings.Join(leanFeatures, ",")}}
	}
	if p.masksPasswords() {
		browser["initPage"] = []string{filepath.Join(p.StateDir, MaskPasswordsFile)}
	}
	b, err := json.MarshalIndent(map[string]any{"browser": browser}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return fmt.Errorf("the browser's folder: %w", err)
	}
	if p.masksPasswords() {
		if err := writeIfChanged(p.StateDir, MaskPasswordsFile, maskPasswords); err != nil {
			return fmt.Errorf("the browser's password mask: %w", err)
		}
	}
	if err := writeIfChanged(p.StateDir, filepath.Base(p.launchConfigPath()), b); err != nil {
		return fmt.Errorf("the browser's launch configuration: %w", err)
	}
	return nil
}

// writeIfChanged gives dir/name the content b, atomically (chats may
// start at once), unless it has it already.
func writeIfChanged(dir, name string, b []byte) error {
	path := filepath.Join(dir, name)
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return nil
	}
	return store.WriteFile(path, b, nil)
}

// isolated reports whether args ask for an in-memory profile: "--isolated",
// or "--isolated=<anything but false>".
func isolated(args []string) bool {
	for _, a := range args {
		if a == "--isolated" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--isolated="); ok && v != "false" {
			return true
		}
	}
	return false
}

func (p Playwright) pkg() string {
	if p.Package != "" {
		return p.Package
	}
	return PlaywrightPackage
}

// StartupLine is the start-up log line.
func (p Playwright) StartupLine() string {
	if !p.IsEnabled() {
		return "MCP: playwright disabled (" + PlaywrightHint + ")"
	}
	mode := "headless"
	if !p.IsHeadless() {
		mode = "headed"
	}
	switch {
	case p.CDPEndpoint != "":
		mode = "a browser at a CDP endpoint shared by every chat, a context each"
	case p.IsShared():
		mode += ", one browser shared by every chat, a context each"
	}
	unit := "browsers"
	if p.IsShared() {
		unit = "browsing chats"
	}
	if p.MaxBrowsers > 0 {
		return fmt.Sprintf("MCP: playwright enabled (%s, %s, at most %d %s at once)", mode, p.BrowserName(), p.MaxBrowsers, unit)
	}
	return fmt.Sprintf("MCP: playwright enabled (%s, %s)", mode, p.BrowserName())
}

// BrowserSection is the system-prompt section for the browser tools of
// @playwright/mcp 0.0.83. withSend says whether the send tool is offered:
// only then does the section tell the model to deliver files with it.
// outputDir is the workspace folder of the files the browser names itself
// (Playwright.OutputDir).
func BrowserSection(withSend bool, outputDir string) string {
	var b strings.Builder
	b.WriteString(`## Browser
- browser_* tools drive a real browser. Use browser_snapshot (an accessibility tree with element refs) to read a page and find refs for browser_click, browser_type and browser_fill_form; it is cheaper and more reliable than screenshots. browser_navigate answers with the page's snapshot.
- Take a screenshot (browser_take_screenshot) without ` + "`filename`" + ` only when you need to see the visual layout yourself; the image comes back to you.
`)
	if withSend {
		b.WriteString(`- To give the user a screenshot, save it with ` + "`filename: \"browser/<name>.png\"`" + ` and then call ` + "`send`" + ` with that path. Downloads and other files the browser names itself are under ` + outputDir + `/, where the oldest are removed when the chat's disk budget is full: send the user what they should keep.
`)
	} else {
		b.WriteString(`- Screenshots saved with a filename such as browser/<name>.png are in the workspace; downloads and other files the browser names itself are under ` + outputDir + `/, where the oldest are removed when the chat's disk budget is full.
`)
	}
	b.WriteString(`- Close the browser (browser_close) when a task is finished. Browser state may be reset after a long pause.
- Don't enter passwords or payment details unless the user explicitly asks for that specific site.`)
	return b.String()
}
