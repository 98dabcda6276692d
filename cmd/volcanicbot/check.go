package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// runCheck is `volcanicbot check`: the configuration is loaded and
// validated, every enabled MCP server is discovered, and a table of servers,
// states, tool counts and the tokens their tool lists cost per request is
// printed, followed by each failure's reason. It fails when the
// configuration is invalid or any server fails.
func runCheck(ctx context.Context, stdout, stderr io.Writer, environ []string) error {
	m, err := NewMain(stderr, environ)
	if err != nil {
		fmt.Fprintf(stdout, "configuration: invalid\n%v\n", err)
		return errReported
	}
	defer m.Close()
	if err := m.cfg.Validate(false); err != nil {
		fmt.Fprintf(stdout, "configuration: invalid\n%v\n", err)
		return errReported
	}
	fmt.Fprintln(stdout, "configuration: ok")
	if m.preset.IsEnabled() {
		fmt.Fprintf(stdout, "browser mode: %s: %s\n", m.preset.ModeName(), m.browserWhy)
	}
	if len(m.cfg.Telegram.AllowedUsers) == 0 {
		fmt.Fprintln(stdout, "warning: TELEGRAM_ALLOWED_USERS is empty: the bot answers nobody")
	}
	if m.cfg.Telegram.Token == "" {
		fmt.Fprintln(stdout, "warning: TELEGRAM_BOT_TOKEN is not set: `run` needs it")
	}
	for _, w := range m.serverWarnings() {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	cats := m.mcp.Discover(ctx)
	ok := printCatalogs(stdout, cats, m.mcp.ToolTokens, m.planTools)
	opened, err := m.probeBrowsers(ctx, cats)
	if len(opened) > 0 {
		fmt.Fprintln(stdout)
	}
	for _, name := range opened {
		if name == preset.PlaywrightServer {
			fmt.Fprintln(stdout, "browser: ok (opened about:blank)")
		} else {
			fmt.Fprintf(stdout, "browser: %s: ok (opened about:blank)\n", name)
		}
	}
	if err != nil {
		fmt.Fprintf(stdout, "\nfailed: %v\n", err)
		ok = false
	}
	if !ok {
		return errReported
	}
	return nil
}

// probeBrowsers opens about:blank once with every discovered entry that
// runs @playwright/mcp — the preset, and the user's own (its README's
// `npx @playwright/mcp@latest` looks for Google Chrome): listing the tools
// starts no browser, so a browser that cannot start (a missing executable,
// a sandbox a container does not allow) would show only at the first
// chat's first browser call. It returns the servers whose browser opened
// the page, and the failures, joined.
func (m *Main) probeBrowsers(ctx context.Context, cats []mcpclient.ServerCatalog) ([]string, error) {
	var (
		opened []string
		errs   []error
	)
	for _, sc := range cats {
		if !sc.Config.Enabled || sc.Err != nil || !preset.RunsPlaywright(sc.Config) {
			continue
		}
		var navigate, closeTool mcpclient.Tool
		for _, t := range sc.Catalog.Tools {
			switch t.MCPName {
			case preset.PlaywrightProbeTool:
				navigate = t
			case preset.PlaywrightCloseTool:
				closeTool = t
			}
		}
		if navigate.Name == "" {
			continue // browser_navigate hidden: nothing to open a page with
		}
		if err := m.probeBrowser(ctx, sc.Config, navigate, closeTool); err != nil {
			errs = append(errs, err)
			continue
		}
		opened = append(opened, sc.Config.Display())
	}
	return opened, errors.Join(errs...)
}

// probeBrowser opens about:blank with navigate, in a session of its own,
// and closes the browser again.
func (m *Main) probeBrowser(ctx context.Context, cfg mcpconfig.ServerConfig, navigate, closeTool mcpclient.Tool) error {
	name := cfg.Display()
	isPreset := cfg.Source == mcpconfig.SourcePreset
	tmp, err := os.MkdirTemp("", "volcanicbot-check-*")
	if err != nil {
		return fmt.Errorf("%s: temp dir: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	// A chat's two folders, side by side (chatdir).
	ws, private := filepath.Join(tmp, "workspace"), filepath.Join(tmp, "private")
	for _, d := range []string{ws, private} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("%s: temp dir: %w", name, err)
		}
	}
	s, err := m.mcp.NewSession(ws, private)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Call(ctx, navigate, json.RawMessage(preset.PlaywrightProbeArgs))
	if err != nil {
		return fmt.Errorf("%s: the browser did not start: %w", name, err)
	}
	switch {
	case res.IsError && isPreset && m.preset.CDPEndpoint != "":
		return fmt.Errorf("%s: the browser at PLAYWRIGHT_CDP_ENDPOINT %s does not open a page (%s): start it, or check the URL and PLAYWRIGHT_CDP_HEADER.\n%s",
			name, m.secrets.Redact(m.preset.CDPEndpoint), preset.PlaywrightProbeArgs, res.Text())
	case res.IsError && isPreset:
		return fmt.Errorf("%s: the browser does not start (%s). %s\n%s", name, preset.PlaywrightProbeArgs,
			preset.BrowserStartHint, res.Text())
	case res.IsError:
		return fmt.Errorf("%s: the browser does not start (%s). %s\n%s", name, preset.PlaywrightProbeArgs,
			preset.UserBrowserHint, res.Text())
	}
	if closeTool.Name != "" {
		_, _ = s.Call(ctx, closeTool, json.RawMessage(`{}`))
	}
	return nil
}

// printCatalogs writes the server table and the failures; it reports
// whether every enabled server was discovered and offers the model at
// least one tool. Tools refused for a name clash are counted apart (and
// cost no tokens): a server whose every tool was refused fails, with the
// fix in its refusal lines.
func printCatalogs(w io.Writer, cats []mcpclient.ServerCatalog, toolTokens func([]mcpclient.Tool) int,
	plan func([]mcpclient.Tool) session.ToolPlan) bool {
	if len(cats) == 0 {
		fmt.Fprintln(w, "MCP servers: none configured")
		return true
	}
	r := resolveCatalogs(cats, toolTokens, plan)
	ok, total, failures := r.writeTable(w)
	fmt.Fprintf(w, "\n%s offered to the model, about %d tokens per request with every schema\n", countOf(len(r.tools), "tool"), total)
	r.writeToolSearch(w)
	r.writeToolNames(w)
	r.writeWarnings(w)
	for _, f := range failures {
		fmt.Fprintf(w, "\nfailed: %s\n", f)
	}
	return ok
}

// catalogReport is what check prints of the discovered servers: the
// tools offered to the model, by server, the tools refused, and how the
// bot offers them.
type catalogReport struct {
	cats       []mcpclient.ServerCatalog
	tools      []mcpclient.Tool
	refusals   []mcpclient.Refusal
	offered    map[string][]mcpclient.Tool // by group: the server's name, or mcpclient.ResourcesGroup
	refused    map[string]int              // how many of a server's tools were refused
	plan       session.ToolPlan
	toolTokens func([]mcpclient.Tool) int
}

// resolveCatalogs names the tools of every enabled server that was
// discovered, as the bot would, and plans how they are offered.
func resolveCatalogs(cats []mcpclient.ServerCatalog, toolTokens func([]mcpclient.Tool) int,
	plan func([]mcpclient.Tool) session.ToolPlan) *catalogReport {
	var discovered []mcpclient.Catalog
	for _, sc := range cats {
		if sc.Err == nil && sc.Config.Enabled {
			cat := sc.Catalog
			cat.Label = sc.Config.Label
			discovered = append(discovered, cat)
		}
	}
	r := &catalogReport{cats: cats, offered: map[string][]mcpclient.Tool{}, refused: map[string]int{}, toolTokens: toolTokens}
	r.tools, r.refusals = mcpclient.ResolveTools(discovered, session.BuiltinNames(), nil)
	for _, t := range r.tools {
		r.offered[t.Group()] = append(r.offered[t.Group()], t)
	}
	for _, rf := range r.refusals {
		r.refused[rf.Server]++
	}
	r.plan = plan(r.tools)
	return r
}

// writeTable writes a row per server, and one for the resource tools when
// there are any. It reports whether every row is fine, the tokens of
// every tool offered, and the failures' reasons.
func (r *catalogReport) writeTable(w io.Writer) (ok bool, total int, failures []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\t~TOKENS\tLOADED\tSOURCE")
	ok = true
	for _, sc := range r.cats {
		state, count, tokens, loaded, n := r.serverRow(sc)
		total += n
		switch state {
		case "failed":
			ok = false
			failures = append(failures, sc.Err.Error())
		case "refused":
			ok = false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sc.Config.Display(), state, count, tokens, loaded,
			cmp.Or(sc.Config.Origin, string(sc.Config.Source)))
	}
	// The resource tools (list and read, for every server that offers
	// resources) are offered too, whatever the servers' own tools: a row
	// of their own, so the total adds up what the rows show.
	if res := r.offered[mcpclient.ResourcesGroup]; len(res) > 0 {
		n := r.toolTokens(res)
		total += n
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", resourcesRow, "ok", len(res), n, loadedColumn(res, r.plan, r.toolTokens),
			"the servers' resources")
	}
	tw.Flush()
	return ok, total, failures
}

// serverRow is the STATE, TOOLS, ~TOKENS and LOADED columns of a server's
// row, and the tokens its offered tools cost.
func (r *catalogReport) serverRow(sc mcpclient.ServerCatalog) (state, count, tokens, loaded string, n int) {
	state, count, tokens, loaded = "ok", "-", "-", "-"
	name := sc.Config.Name
	switch {
	case !sc.Config.Enabled:
		return "disabled", count, tokens, loaded, 0
	case sc.Err != nil:
		return "failed", count, tokens, loaded, 0
	}
	offered := r.offered[name]
	n = r.toolTokens(offered)
	count, tokens = fmt.Sprint(len(offered)), fmt.Sprint(n)
	if h := len(sc.Catalog.Hidden); h > 0 {
		count += fmt.Sprintf(" (+%d hidden)", h)
	}
	if len(offered) > 0 {
		loaded = loadedColumn(offered, r.plan, r.toolTokens)
	}
	if r.refused[name] > 0 {
		count += fmt.Sprintf(" (+%d refused)", r.refused[name])
		if len(offered) == 0 {
			state = "refused"
		}
	}
	return state, count, tokens, loaded, n
}

// writeToolSearch writes whether tool search is on, and what the tool
// list costs either way.
func (r *catalogReport) writeToolSearch(w io.Writer) {
	p := r.plan
	switch {
	case p.Search:
		fmt.Fprintf(w, "tool search (LLM_TOOL_SEARCH=%s): on; %d tools deferred, found with tool_search; the tool list costs about %d tokens per request "+
			"(the built-ins, the tools always loaded and the names of the deferred ones), %d with every schema\n",
			p.Mode, len(p.Deferred), p.OfferedTokens, p.FullTokens)
	case p.Mode == session.ToolSearchAuto:
		fmt.Fprintf(w, "tool search (LLM_TOOL_SEARCH=auto): off; the whole list (%d tokens with the built-ins) is within %d tokens\n", p.FullTokens, p.Threshold)
	default:
		fmt.Fprintf(w, "tool search (LLM_TOOL_SEARCH=%s): off\n", p.Mode)
	}
}

// writeToolNames writes the names of the tools offered, a line per server
// that offers any, then one for the resource tools.
func (r *catalogReport) writeToolNames(w io.Writer) {
	line := func(display string, tools []mcpclient.Tool) {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		fmt.Fprintf(w, "  %s: %s\n", display, strings.Join(names, ", "))
	}
	for _, sc := range r.cats {
		if tools := r.offered[sc.Config.Name]; len(tools) > 0 {
			line(sc.Config.Display(), tools)
		}
	}
	if res := r.offered[mcpclient.ResourcesGroup]; len(res) > 0 {
		line(resourcesRow, res)
	}
}

// writeWarnings writes the tools refused for a name clash, the servers'
// warnings, and the alwaysLoad names no server offers.
func (r *catalogReport) writeWarnings(w io.Writer) {
	for _, rf := range r.refusals {
		fmt.Fprintf(w, "refused: %s\n", rf.String())
	}
	for _, sc := range r.cats {
		for _, warning := range sc.Catalog.Warnings {
			fmt.Fprintf(w, "warning: server %q: %s\n", sc.Config.Display(), warning)
		}
	}
	missing := r.plan.MissingAlwaysLoad
	for _, server := range slices.Sorted(maps.Keys(missing)) {
		fmt.Fprintf(w, "warning: server %q: alwaysLoad names %s, which the server does not offer\n", server,
			strings.Join(missing[server], ", "))
	}
}

// resourcesRow names the row of the resource tools in check's table.
const resourcesRow = "(resources)"

// countOf is "1 tool", "2 tools".
func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// loadedColumn is the LOADED column of a server's tools: "all" when none is
// deferred, else how many are in every request, at what cost, and how many
// are deferred.
func loadedColumn(tools []mcpclient.Tool, p session.ToolPlan, toolTokens func([]mcpclient.Tool) int) string {
	var always []mcpclient.Tool
	for _, t := range tools {
		if !p.Deferred[t.Name] {
			always = append(always, t)
		}
	}
	switch {
	case len(always) == len(tools):
		return "all"
	case len(always) == 0:
		return fmt.Sprintf("0, %d deferred", len(tools))
	}
	return fmt.Sprintf("%d (~%d), %d deferred", len(always), toolTokens(always), len(tools)-len(always))
}

// planTools is how the bot offers tools under its configuration.
func (m *Main) planTools(tools []mcpclient.Tool) session.ToolPlan {
	return session.PlanTools(session.PlanOptions{Mode: m.cfg.LLM.ToolSearch, ContextTokens: m.cfg.LLM.ContextTokens,
		CountTokens: m.tokens.Count}, slices.Concat(catalogTools(tools), session.BuiltinCatalog()), m.mcp.Servers())
}

// catalogTools are tools as the planner takes them.
func catalogTools(tools []mcpclient.Tool) []chat.CatalogTool {
	out := make([]chat.CatalogTool, len(tools))
	for i, t := range tools {
		out[i] = t.CatalogTool()
	}
	return out
}
