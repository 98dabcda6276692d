package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
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
	if !printCatalogs(stdout, m.mcp.Discover(ctx)) {
		return errReported
	}
	return nil
}

// printCatalogs writes the server table and the failures; it reports
// whether every enabled server was discovered.
func printCatalogs(w io.Writer, cats []mcpclient.ServerCatalog) bool {
	if len(cats) == 0 {
		fmt.Fprintln(w, "MCP servers: none configured")
		return true
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\t~TOKENS\tSOURCE")
	ok := true
	var failures []string
	total := 0
	for _, sc := range cats {
		state, tools, tokens := "ok", "-", "-"
		switch {
		case !sc.Config.Enabled:
			state = "disabled"
		case sc.Err != nil:
			state = "failed"
			ok = false
			failures = append(failures, sc.Err.Error())
		default:
			n := mcpclient.EstimateTokens(sc.Catalog.Tools)
			total += n
			tools, tokens = fmt.Sprint(len(sc.Catalog.Tools)), fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sc.Config.Name, state, tools, tokens,
			cmp.Or(sc.Config.Origin, string(sc.Config.Source)))
	}
	tw.Flush()

	var discovered []mcpclient.Catalog
	for _, sc := range cats {
		if sc.Err == nil && sc.Config.Enabled {
			discovered = append(discovered, sc.Catalog)
		}
	}
	tools, refusals := mcpclient.ResolveTools(discovered, builtinTools, nil)
	fmt.Fprintf(w, "\n%d tools offered to the model, about %d tokens per request\n", len(tools), total)
	for _, sc := range cats {
		if sc.Err != nil || !sc.Config.Enabled || len(sc.Catalog.Tools) == 0 {
			continue
		}
		names := make([]string, len(sc.Catalog.Tools))
		for i, t := range sc.Catalog.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(w, "  %s: %s\n", sc.Config.Name, strings.Join(names, ", "))
	}
	for _, r := range refusals {
		fmt.Fprintf(w, "refused: %s\n", r.String())
	}
	for _, f := range failures {
		fmt.Fprintf(w, "\nfailed: %s\n", f)
	}
	return ok
}
