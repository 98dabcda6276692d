// Package preset holds typed shortcuts that expand into MCP server
// configurations: today the Playwright browser.
package preset

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
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
	// MaxBrowsers is the most browsers (server processes) that run at once
	// across every chat (the server's maxLive); 0: no ceiling.
	MaxBrowsers int
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
//	    --output-dir ${workspace}/browser
//	    --user-data-dir ${workspace}/.volcanic/browser-profile
//	    [--executable-path <path>] [--no-sandbox] <extra args>
//
// --user-data-dir is left out when the extra arguments contain --isolated.
func (p Playwright) Server() mcpconfig.ServerConfig {
	cmd, args := "npx", []string{"-y", p.pkg()}
	startup := mcpconfig.DefaultInstallerStartupTimeout // npx may install the package first
	if p.Command != "" {
		cmd, args, startup = p.Command, nil, 120*time.Second
	}
	if p.IsHeadless() {
		args = append(args, "--headless")
	}
	args = append(args, "--browser", p.BrowserName(), "--output-dir", "${workspace}/browser")
	if !isolated(p.ExtraArgs) {
		args = append(args, "--user-data-dir", "${workspace}/.volcanic/browser-profile")
	}
	// What the deployment needs has settings of its own, so that the user's
	// extra arguments add to it rather than replace it.
	if p.ExecutablePath != "" {
		args = append(args, "--executable-path", p.ExecutablePath)
	}
	if p.NoSandbox != nil && *p.NoSandbox {
		args = append(args, "--no-sandbox")
	}
	args = append(args, p.ExtraArgs...)
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
		BeforeStart:    clearStaleProfileLock,
		MaxLive:        p.MaxBrowsers,
		ProcessNoun:    "browser",
		AlwaysLoad:     slices.Clone(PlaywrightCore),
	}
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
	if p.MaxBrowsers > 0 {
		return fmt.Sprintf("MCP: playwright enabled (%s, %s, at most %d browsers at once)", mode, p.BrowserName(), p.MaxBrowsers)
	}
	return fmt.Sprintf("MCP: playwright enabled (%s, %s)", mode, p.BrowserName())
}

// BrowserSection is the system-prompt section for the browser tools of
// @playwright/mcp 0.0.83. withSend says whether the send tool is offered:
// only then does the section tell the model to deliver files with it.
func BrowserSection(withSend bool) string {
	var b strings.Builder
	b.WriteString(`## Browser
- browser_* tools drive a real browser. Use browser_snapshot (an accessibility tree with element refs) to read a page and find refs for browser_click, browser_type and browser_fill_form; it is cheaper and more reliable than screenshots. browser_navigate answers with the page's snapshot.
- Take a screenshot (browser_take_screenshot) without ` + "`filename`" + ` only when you need to see the visual layout yourself; the image comes back to you.
`)
	if withSend {
		b.WriteString(`- To give the user a screenshot, save it with ` + "`filename: \"browser/<name>.png\"`" + ` and then call ` + "`send`" + ` with that path. Downloads and other files the browser saves are under browser/ too.
`)
	} else {
		b.WriteString(`- Files the browser saves (screenshots with a filename such as browser/<name>.png, downloads) are under browser/ in the workspace.
`)
	}
	b.WriteString(`- Close the browser (browser_close) when a task is finished. Browser state may be reset after a long pause.
- Don't enter passwords or payment details unless the user explicitly asks for that specific site.`)
	return b.String()
}
