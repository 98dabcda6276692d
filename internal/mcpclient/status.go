package mcpclient

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// The /mcp texts. They cost no model call and never wait for a server: a
// server still being discovered says so. Everything goes through the
// redactor before it is returned, because the last error and the stderr
// tail can hold a secret.

// ToolCost says what a server's offered tools cost in each model request,
// for /mcp (the host may defer some of them); nil: "~N tokens a request",
// every schema counted with the client's tokenizer.
type ToolCost func(server string, offered []Tool) string

// StatusText is /mcp: each configured server with its state in this session
// and the number of its tools the model is offered (refused ones, such as
// name clashes, are counted apart).
func (s *Session) StatusText() string { return s.StatusTextWith(nil) }

// StatusTextWith is StatusText with the tools' cost told by cost.
func (s *Session) StatusTextWith(cost ToolCost) string {
	cats := s.client.Lookup()
	if len(cats) == 0 {
		return "No MCP servers are configured. Add them to mcpServers in settings.json (see docs/mcp.md)."
	}
	_, refusals := s.client.resolve(cats)
	var b strings.Builder
	b.WriteString("MCP servers:\n")
	for _, sc := range cats {
		fmt.Fprintf(&b, "• %s: %s\n", sc.Config.Display(), s.stateLine(sc, refusals, cost))
	}
	if w := s.client.oom; w != nil {
		if r := w.report(); r != "" {
			b.WriteString(r + "\n")
		}
	}
	return s.client.sp.redactor.Redact(strings.TrimRight(b.String(), "\n"))
}

// stateLine is "running, 21 tools", "failed: <reason>", "disabled" …
func (s *Session) stateLine(sc ServerCatalog, refusals []Refusal, cost ToolCost) string {
	if !sc.Config.Enabled {
		if sc.Config.DisabledHint != "" {
			return "disabled (" + sc.Config.DisabledHint + ")"
		}
		return "disabled"
	}
	if sc.Discovering {
		return "starting (listing its tools)"
	}
	if nl, ok := needsLogin(sc.Err); ok {
		line := "needs login: an admin sends /mcp login " + sc.Config.Ref() + " (or runs `volcanicbot login " + sc.Config.Name + "` on the bot's host)"
		if nl.Reason != "" {
			line += "; " + nl.Reason
		}
		if n := len(sc.Catalog.Tools); n > 0 {
			line += fmt.Sprintf("; its %s from the last login say so when called", plural(n, "tool"))
		}
		return line
	}
	if sc.Err != nil {
		return "failed: " + firstLine(sc.Err.Error())
	}
	st, _ := s.Status(sc.Config.Name)
	state := st.State.String()
	if st.State == StateFailed {
		state = "failed: " + firstLine(st.LastErr)
	}
	refused := refusedOf(refusals, sc.Config.Name)
	offered := offeredTools(sc.Catalog.Tools, refused)
	line := fmt.Sprintf("%s, %s", state, plural(len(offered), "tool"))
	switch {
	case len(offered) == 0:
	case cost != nil:
		if c := cost(sc.Config.Name, offered); c != "" {
			line += " (" + c + ")"
		}
	default:
		line += fmt.Sprintf(" (~%d tokens a request)", s.client.ToolTokens(offered))
	}
	if len(refused) > 0 {
		line += fmt.Sprintf(" (%d refused: see /mcp %s)", len(refused), sc.Config.Ref())
	}
	if ch := s.client.auth.challenge(sc.Config.Name); ch.InsufficientScope() && sc.Config.URL != "" {
		line += fmt.Sprintf("; some calls need a login with more permissions (scope %q): an admin sends /mcp login %s",
			ch.Scope, sc.Config.Ref())
	}
	if live, limit, waiting := s.client.Usage(sc.Config.Name); limit > 0 {
		line += fmt.Sprintf("; %d of %d live across chats", live, limit)
		if waiting > 0 {
			line += fmt.Sprintf(", %d waiting", waiting)
		}
	}
	return line
}

// offeredTools is tools less the refused ones.
func offeredTools(tools []Tool, refused []Refusal) []Tool {
	if len(refused) == 0 {
		return tools
	}
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if !slices.ContainsFunc(refused, func(r Refusal) bool { return r.MCPName == t.MCPName }) {
			out = append(out, t)
		}
	}
	return out
}

func refusedOf(refusals []Refusal, server string) []Refusal {
	var out []Refusal
	for _, r := range refusals {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// ServerText is /mcp <name>: the unexpanded command line (or URL), the
// names (never the values) of its env entries (or headers), server info,
// the tools offered and refused, the last error, the stderr tail, and the
// last process that exited on its own with its stderr.
func (s *Session) ServerText(name string) (string, error) { return s.ServerTextWith(name, nil) }

// ServerTextWith is ServerText with the tools' cost told by cost.
func (s *Session) ServerTextWith(name string, cost ToolCost) (string, error) {
	cfg, ok := s.client.Server(name)
	if !ok {
		return "", s.client.unknownServer(name)
	}
	name = cfg.Name
	cats := s.client.Lookup()
	var sc ServerCatalog
	for _, c := range cats {
		if c.Config.Name == name {
			sc = c
		}
	}
	_, all := s.client.resolve(cats)
	refusals := refusedOf(all, name)
	st, _ := s.Status(name)

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", cfg.Display(), s.stateLine(sc, all, cost))
	writeConfigLines(&b, cfg)
	s.writeProcessLines(&b, name, sc, st)
	writeToolLines(&b, cfg, sc, refusals)
	writeTroubleLines(&b, sc, st)
	return capMessage(s.client.sp.redactor.Redact(strings.TrimRight(b.String(), "\n")), maxServerTextBytes), nil
}

// unknownServer is the error of a /mcp <name> that names no configured
// server: it lists the configured ones.
func (c *Client) unknownServer(name string) error {
	names := make([]string, 0, len(c.servers))
	for _, cfg := range c.servers {
		names = append(names, cfg.Display())
	}
	if len(names) == 0 {
		return fmt.Errorf("no MCP server named %q (none are configured)", name)
	}
	return fmt.Errorf("no MCP server named %q (configured: %s)", name, strings.Join(names, ", "))
}

// writeConfigLines writes what the configuration says of the server: its
// internal name, command or URL, working directory, environment (names
// only) and where it was configured.
func writeConfigLines(b *strings.Builder, cfg mcpconfig.ServerConfig) {
	if cfg.Label != "" {
		fmt.Fprintf(b, "internal name: %s (its tools, files and the log use it; /mcp accepts either)\n", cfg.Name)
	}
	if cfg.Shared {
		fmt.Fprintf(b, "command: %s\n", commandLine(cfg))
		fmt.Fprintf(b, "url: %s (one process for every chat, on a free port)\n", cfg.URL)
	} else if cfg.URL != "" {
		fmt.Fprintf(b, "url: %s\n", cfg.URL)
		if len(cfg.Headers) > 0 {
			fmt.Fprintf(b, "headers: %s\n", strings.Join(sortedKeys(cfg.Headers), ", "))
		}
	} else {
		fmt.Fprintf(b, "command: %s\n", commandLine(cfg))
	}
	if cfg.Cwd != "" {
		fmt.Fprintf(b, "cwd: %s\n", cfg.Cwd)
	}
	if len(cfg.Env) > 0 {
		fmt.Fprintf(b, "env: %s\n", strings.Join(sortedKeys(cfg.Env), ", "))
	}
	fmt.Fprintf(b, "source: %s\n", firstNonEmpty(cfg.Origin, string(cfg.Source)))
}

// writeProcessLines writes what runs: the server's name and version, its
// resources, the shared process, the chat's process (pid, memory) and
// how often it started and was stopped for other chats.
func (s *Session) writeProcessLines(b *strings.Builder, name string, sc ServerCatalog, st ConnStatus) {
	info := st.Info
	if info.Name == "" {
		info = sc.Catalog.ServerInfo
	}
	if info.Name != "" {
		fmt.Fprintf(b, "server: %s %s (protocol %s)\n", info.Name, info.Version, info.ProtocolVersion)
	}
	if sc.Catalog.ServerInfo.Resources {
		fmt.Fprintf(b, "resources: offered (the model lists them with %s and reads them with %s)\n", ListResourcesTool, ReadResourceTool)
	}
	if h := s.client.sp.hosts[name]; h != nil {
		if pid, users, mem := h.status(); pid != 0 {
			fmt.Fprintf(b, "shared process: pid %d, %s (PSS, with its children) for %s\n", pid, sizeText(int(mem)),
				plural(users, "session"))
		} else {
			b.WriteString("shared process: not running (it starts with the first call of any chat)\n")
		}
		if why, at := h.lastReplaced(); why != "" {
			fmt.Fprintf(b, "last replaced: %s UTC: it %s\n", at.UTC().Format("2006-01-02 15:04:05"), why)
		}
	}
	if st.PID != 0 {
		fmt.Fprintf(b, "pid: %d\n", st.PID)
		if m, ok := s.Memory(name); ok && m > 0 {
			fmt.Fprintf(b, "memory: %s (the process and its children, PSS)\n", sizeText(int(m)))
		}
	}
	if st.Starts > 0 {
		fmt.Fprintf(b, "starts in this chat: %d\n", st.Starts)
	}
	if st.Evictions > 0 {
		fmt.Fprintf(b, "stopped for other chats (maxLive): %d\n", st.Evictions)
	}
}

// writeToolLines writes the server's tools: the prefix, those offered and
// those that ask first, those hidden, refused or left out.
func writeToolLines(b *strings.Builder, cfg mcpconfig.ServerConfig, sc ServerCatalog, refusals []Refusal) {
	if cfg.ToolPrefix != "" {
		fmt.Fprintf(b, "tool prefix: %s\n", cfg.ToolPrefix)
	}
	var offered, asking []string
	for _, t := range offeredTools(sc.Catalog.Tools, refusals) {
		offered = append(offered, t.Name)
		if cfg.ApprovalFor(t.MCPName, t.Name, t.Annotations.ReadOnly()) != mcpconfig.RunFreely {
			asking = append(asking, t.Name)
		}
	}
	if len(offered) > 0 {
		fmt.Fprintf(b, "tools (%d): %s\n", len(offered), strings.Join(offered, ", "))
	}
	if line := approvalLine(cfg, asking); line != "" {
		b.WriteString(line)
	}
	if len(sc.Catalog.Hidden) > 0 {
		fmt.Fprintf(b, "hidden from the model (disabledTools, includeTools, excludeTools): %d: %s\n", len(sc.Catalog.Hidden),
			capMessage(strings.Join(sc.Catalog.Hidden, ", "), 1<<10))
	}
	for _, r := range refusals {
		fmt.Fprintf(b, "refused: %s\n", r.String())
	}
	for _, w := range sc.Catalog.Warnings {
		fmt.Fprintf(b, "left out: %s\n", w)
	}
}

// writeTroubleLines writes what went wrong: the discovery's error, the
// last error, the stderr tail, the last crash and its tail.
func writeTroubleLines(b *strings.Builder, sc ServerCatalog, st ConnStatus) {
	if sc.Err != nil {
		fmt.Fprintf(b, "discovery error:\n%s\n", sc.Err.Error())
	}
	if st.LastErr != "" && st.LastErr != st.LastExit {
		fmt.Fprintf(b, "last error: %s\n", st.LastErr)
	}
	if len(st.Tail) > 0 {
		fmt.Fprintf(b, "stderr (last lines):\n%s\n", capTail(st.Tail, maxTailBytes))
	}
	if st.LastExit != "" {
		fmt.Fprintf(b, "last crash: %s\n", st.LastExit)
		if len(st.ExitTail) > 0 {
			fmt.Fprintf(b, "its stderr (last lines):\n%s\n", capTail(st.ExitTail, maxTailBytes))
		}
	}
}

// maxServerTextBytes caps /mcp <name>: three Telegram messages at most,
// whatever the server's errors and stderr hold.
const maxServerTextBytes = 12 << 10

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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// approvalLine is /mcp <name>'s line on approvals: the rule, its lists,
// and which of the offered tools wait for a user's yes; "" when none
// ever does.
func approvalLine(cfg mcpconfig.ServerConfig, asking []string) string {
	mode := cfg.Approval
	if mode == "" {
		mode = mcpconfig.ApprovalNever
	}
	if mode == mcpconfig.ApprovalNever && len(cfg.AlwaysAsk) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "approval: %s", mode)
	if len(cfg.AutoApprove) > 0 {
		fmt.Fprintf(&b, "; autoApprove: %s", strings.Join(cfg.AutoApprove, ", "))
	}
	if len(cfg.AlwaysAsk) > 0 {
		fmt.Fprintf(&b, "; alwaysAsk: %s", strings.Join(cfg.AlwaysAsk, ", "))
	}
	if len(asking) == 0 {
		b.WriteString(" — no offered tool asks\n")
	} else {
		fmt.Fprintf(&b, " — asks before %d: %s\n", len(asking), capMessage(strings.Join(asking, ", "), 1<<10))
	}
	return b.String()
}
