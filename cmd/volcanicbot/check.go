package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

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
	if err := m.probeBrowser(ctx, cats); err != nil {
		fmt.Fprintf(stdout, "\nfailed: %v\n", err)
		ok = false
	} else if m.preset.IsEnabled() {
		fmt.Fprintln(stdout, "\nbrowser: ok (opened about:blank)")
	}
	if !ok {
		return errReported
	}
	return nil
}

// probeBrowser opens about:blank with the browser preset, once: listing
// the tools starts no browser, so a browser that cannot start (a missing
// executable, a sandbox a container does not allow) would show only at the
// first chat's first browser call. Nil when the preset is off or was not
// discovered (that failure is reported already).
func (m *Main) probeBrowser(ctx context.Context, cats []mcpclient.ServerCatalog) error {
	var navigate, closeTool mcpclient.Tool
	for _, sc := range cats {
		if sc.Config.Source != mcpconfig.SourcePreset || sc.Config.Name != preset.PlaywrightServer || !sc.Config.Enabled || sc.Err != nil {
			continue
		}
		for _, t := range sc.Catalog.Tools {
			switch t.MCPName {
			case preset.PlaywrightProbeTool:
				navigate = t
			case preset.PlaywrightCloseTool:
				closeTool = t
			}
		}
	}
	if navigate.Name == "" {
		return nil
	}
	ws, err := os.MkdirTemp("", "volcanicbot-check-*")
	if err != nil {
		return fmt.Errorf("%s: temp dir: %w", preset.PlaywrightServer, err)
	}
	defer os.RemoveAll(ws)
	s, err := m.mcp.NewSession(ws)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Call(ctx, navigate, json.RawMessage(preset.PlaywrightProbeArgs))
	if err != nil {
		return fmt.Errorf("%s: the browser did not start: %w", preset.PlaywrightServer, err)
	}
	if res.IsError && m.preset.CDPEndpoint != "" {
		return fmt.Errorf("%s: the browser at PLAYWRIGHT_CDP_ENDPOINT %s does not open a page (%s): start it, or check the URL and PLAYWRIGHT_CDP_HEADER.\n%s",
			preset.PlaywrightServer, m.secrets.Redact(m.preset.CDPEndpoint), preset.PlaywrightProbeArgs, res.Text())
	}
	if res.IsError {
		return fmt.Errorf("%s: the browser does not start (%s). %s\n%s", preset.PlaywrightServer, preset.PlaywrightProbeArgs,
			preset.BrowserStartHint, res.Text())
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
	var discovered []mcpclient.Catalog
	for _, sc := range cats {
		if sc.Err == nil && sc.Config.Enabled {
			cat := sc.Catalog
			cat.Label = sc.Config.Label
			discovered = append(discovered, cat)
		}
	}
	tools, refusals := mcpclient.ResolveTools(discovered, builtinTools, nil)
	offered := map[string][]mcpclient.Tool{}
	for _, t := range tools {
		offered[t.Server] = append(offered[t.Server], t)
	}
	refused := map[string]int{}
	for _, r := range refusals {
		refused[r.Server]++
	}
	p := plan(tools)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\t~TOKENS\tLOADED\tSOURCE")
	ok := true
	var failures []string
	total := 0
	for _, sc := range cats {
		state, count, tokens, loaded := "ok", "-", "-", "-"
		name := sc.Config.Name
		switch {
		case !sc.Config.Enabled:
			state = "disabled"
		case sc.Err != nil:
			state = "failed"
			ok = false
			failures = append(failures, sc.Err.Error())
		default:
			n := toolTokens(offered[name])
			total += n
			count, tokens = fmt.Sprint(len(offered[name])), fmt.Sprint(n)
			if h := len(sc.Catalog.Hidden); h > 0 {
				count += fmt.Sprintf(" (+%d hidden)", h)
			}
			loaded = loadedColumn(offered[name], p, toolTokens)
			if refused[name] > 0 {
				count += fmt.Sprintf(" (+%d refused)", refused[name])
				if len(offered[name]) == 0 {
					state = "refused"
					ok = false
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sc.Config.Display(), state, count, tokens, loaded,
			cmp.Or(sc.Config.Origin, string(sc.Config.Source)))
	}
	tw.Flush()

	fmt.Fprintf(w, "\n%d tools offered to the model, about %d tokens per request with every schema\n", len(tools), total)
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
	for _, sc := range cats {
		if len(offered[sc.Config.Name]) == 0 {
			continue
		}
		names := make([]string, len(offered[sc.Config.Name]))
		for i, t := range offered[sc.Config.Name] {
			names[i] = t.Name
		}
		fmt.Fprintf(w, "  %s: %s\n", sc.Config.Display(), strings.Join(names, ", "))
	}
	for _, r := range refusals {
		fmt.Fprintf(w, "refused: %s\n", r.String())
	}
	for _, sc := range cats {
		for _, warning := range sc.Catalog.Warnings {
			fmt.Fprintf(w, "warning: server %q: %s\n", sc.Config.Display(), warning)
		}
	}
	for _, server := range slices.Sorted(maps.Keys(p.MissingAlwaysLoad)) {
		fmt.Fprintf(w, "warning: server %q: alwaysLoad names %s, which the server does not offer\n", server,
			strings.Join(p.MissingAlwaysLoad[server], ", "))
	}
	for _, f := range failures {
		fmt.Fprintf(w, "\nfailed: %s\n", f)
	}
	return ok
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
		CountTokens: m.tokens.Count}, tools, m.mcp.Servers())
}
