package mcpclient

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// The /mcp texts. They cost no model call; everything goes through the
// redactor before it is returned, because the last error and the stderr tail
// can hold a secret.

// StatusText is /mcp: each configured server with its state in this session
// and its tool count.
func (s *Session) StatusText(ctx context.Context) string {
	cats := s.client.Discover(ctx)
	if len(cats) == 0 {
		return "No MCP servers are configured. Add them to mcpServers in settings.json (see docs/mcp.md)."
	}
	var b strings.Builder
	b.WriteString("MCP servers:\n")
	for _, sc := range cats {
		fmt.Fprintf(&b, "• %s: %s\n", sc.Config.Name, s.stateLine(sc))
	}
	return s.client.redactor.Redact(strings.TrimRight(b.String(), "\n"))
}

// stateLine is "running, 21 tools", "failed: <reason>", "disabled" …
func (s *Session) stateLine(sc ServerCatalog) string {
	if !sc.Config.Enabled {
		if sc.Config.DisabledHint != "" {
			return "disabled (" + sc.Config.DisabledHint + ")"
		}
		return "disabled"
	}
	if sc.Err != nil {
		return "failed: " + firstLine(sc.Err.Error())
	}
	st, _ := s.Status(sc.Config.Name)
	state := st.State.String()
	if st.State == StateFailed {
		state = "failed: " + firstLine(st.LastErr)
	}
	return fmt.Sprintf("%s, %s", state, plural(len(sc.Catalog.Tools), "tool"))
}

// ServerText is /mcp <name>: the unexpanded command line (or URL), the
// names (never the values) of its env entries (or headers), server info, tools, the last error and
// the stderr tail.
func (s *Session) ServerText(ctx context.Context, name string) (string, error) {
	cfg, ok := s.client.Server(name)
	if !ok {
		names := make([]string, 0, len(s.client.servers))
		for _, c := range s.client.servers {
			names = append(names, c.Name)
		}
		if len(names) == 0 {
			return "", fmt.Errorf("no MCP server named %q (none are configured)", name)
		}
		return "", fmt.Errorf("no MCP server named %q (configured: %s)", name, strings.Join(names, ", "))
	}
	var sc ServerCatalog
	sc.Config = cfg
	if cfg.Enabled {
		sc.Catalog, sc.Err = s.client.cache.Get(ctx, cfg)
	}
	st, _ := s.Status(name)

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", name, s.stateLine(sc))
	if cfg.URL != "" {
		fmt.Fprintf(&b, "url: %s\n", cfg.URL)
		if len(cfg.Headers) > 0 {
			keys := make([]string, 0, len(cfg.Headers))
			for k := range cfg.Headers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(&b, "headers: %s\n", strings.Join(keys, ", "))
		}
	} else {
		fmt.Fprintf(&b, "command: %s\n", commandLine(cfg))
	}
	if cfg.Cwd != "" {
		fmt.Fprintf(&b, "cwd: %s\n", cfg.Cwd)
	}
	if len(cfg.Env) > 0 {
		keys := make([]string, 0, len(cfg.Env))
		for k := range cfg.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "env: %s\n", strings.Join(keys, ", "))
	}
	fmt.Fprintf(&b, "source: %s\n", firstNonEmpty(cfg.Origin, string(cfg.Source)))
	info := st.Info
	if info.Name == "" {
		info = sc.Catalog.ServerInfo
	}
	if info.Name != "" {
		fmt.Fprintf(&b, "server: %s %s (protocol %s)\n", info.Name, info.Version, info.ProtocolVersion)
	}
	if st.PID != 0 {
		fmt.Fprintf(&b, "pid: %d\n", st.PID)
	}
	if st.Starts > 0 {
		fmt.Fprintf(&b, "starts in this chat: %d\n", st.Starts)
	}
	if cfg.ToolPrefix != "" {
		fmt.Fprintf(&b, "tool prefix: %s\n", cfg.ToolPrefix)
	}
	if len(sc.Catalog.Tools) > 0 {
		names := make([]string, len(sc.Catalog.Tools))
		for i, t := range sc.Catalog.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(&b, "tools (%d): %s\n", len(names), strings.Join(names, ", "))
	}
	if sc.Err != nil {
		fmt.Fprintf(&b, "discovery error:\n%s\n", sc.Err.Error())
	}
	if st.LastErr != "" {
		fmt.Fprintf(&b, "last error: %s\n", st.LastErr)
	}
	if len(st.Tail) > 0 {
		fmt.Fprintf(&b, "stderr (last %d lines):\n%s\n", len(st.Tail), strings.Join(st.Tail, "\n"))
	}
	return s.client.redactor.Redact(strings.TrimRight(b.String(), "\n")), nil
}

// commandLine renders the unexpanded command and args, quoting where needed.
func commandLine(cfg mcpconfig.ServerConfig) string {
	parts := make([]string, 0, 1+len(cfg.Args))
	for _, a := range append([]string{cfg.Command}, cfg.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = fmt.Sprintf("%q", a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
