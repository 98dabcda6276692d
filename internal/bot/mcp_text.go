package bot

import (
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// The /mcp texts, written from the servers' status (chat.MCPStatus). What
// they return is not redacted yet: an error or a stderr line can hold a
// secret, so the caller redacts the whole text before anything cuts it.

// maxServerTextBytes caps /mcp <name>: three Telegram messages at most,
// whatever the server's errors and stderr hold.
const maxServerTextBytes = 12 << 10

// maxTailBytes caps a stderr tail in /mcp <name>: the last lines that fit.
const maxTailBytes = 4 << 10

// mcpStatusText is /mcp: each configured server with its state in the
// chat and the number of its tools the model is offered (refused ones
// counted apart), then what the OOM killer did.
func mcpStatusText(st chat.MCPStatus) string {
	if len(st.Servers) == 0 {
		return "No MCP servers are configured. Add them to mcpServers in settings.json (see docs/mcp.md)."
	}
	var b strings.Builder
	b.WriteString("MCP servers:\n")
	for _, s := range st.Servers {
		fmt.Fprintf(&b, "• %s: %s\n", s.Display, stateLine(s))
	}
	if k := st.OutOfMemory; k != nil {
		b.WriteString(oomLine(*k) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// oomLine says what the kernel's OOM killer did, and what to do.
func oomLine(k chat.OOMKills) string {
	processes := "1 process"
	if k.Kills != 1 {
		processes = fmt.Sprintf("%d processes", k.Kills)
	}
	what := "the kernel's OOM killer ended " + processes + " under the bot's memory limit"
	if k.Machine {
		what = "the kernel's OOM killer ended MCP server processes: the machine ran out of memory"
	}
	line := "⚠ Out of memory: " + what + fmt.Sprintf(" (the last at %s UTC", k.Last.UTC().Format("15:04:05"))
	if len(k.Servers) > 0 {
		line += "; " + joinNames(k.Servers) + "'s"
	}
	return line + "). Lower the ceilings (maxLive, PLAYWRIGHT_MAX_BROWSERS) or give the bot more memory."
}

// joinNames is "a", "a and b", "a, b and c".
func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " and "
		default:
			out += ", "
		}
		out += n
	}
	return out
}

// stateLine is "running, 21 tools", "failed: <reason>", "disabled" …
func stateLine(s chat.ServerStatus) string {
	if !s.Enabled {
		if s.DisabledHint != "" {
			return "disabled (" + s.DisabledHint + ")"
		}
		return "disabled"
	}
	if s.Discovering {
		return "starting (listing its tools)"
	}
	if nl := s.Login; nl != nil {
		line := "needs login: an admin sends /mcp login " + s.Ref + " (or runs `volcanicbot login " + s.Name + "` on the bot's host)"
		if nl.Reason != "" {
			line += "; " + nl.Reason
		}
		if nl.Tools > 0 {
			line += fmt.Sprintf("; its %s from the last login say so when called", plural(nl.Tools, "tool"))
		}
		return line
	}
	if s.DiscoveryError != "" {
		return "failed: " + firstLine(s.DiscoveryError)
	}
	state := stateName(s.State)
	if s.State == chat.ServerFailed {
		state = "failed: " + firstLine(s.LastError)
	}
	line := fmt.Sprintf("%s, %s", state, plural(len(s.Offered), "tool"))
	if len(s.Offered) > 0 {
		line += " (" + costText(s) + ")"
	}
	if len(s.Refused) > 0 {
		line += fmt.Sprintf(" (%d refused: see /mcp %s)", len(s.Refused), s.Ref)
	}
	if s.ScopeShort {
		line += fmt.Sprintf("; some calls need a login with more permissions (scope %q): an admin sends /mcp login %s",
			s.Scope, s.Ref)
	}
	if s.Limit > 0 {
		line += fmt.Sprintf("; %d of %d live across chats", s.Live, s.Limit)
		if s.Waiting > 0 {
			line += fmt.Sprintf(", %d waiting", s.Waiting)
		}
	}
	return line
}

// costText is what the server's offered tools cost each request: "~836
// tokens a request" when none is deferred, else how many are always
// offered, at what cost, and how many wait for tool_search.
func costText(s chat.ServerStatus) string {
	c := s.Cost
	switch {
	case c == nil:
		return fmt.Sprintf("~%d tokens a request", s.OfferedTokens)
	case c.Deferred == 0:
		return fmt.Sprintf("~%d tokens a request", c.AlwaysTokens)
	case c.Always == 0:
		return fmt.Sprintf("all deferred: found with %s; ~%d tokens a request without it", session.ToolSearchName, c.AllTokens)
	}
	return fmt.Sprintf("%d in every request, ~%d tokens; %d deferred, found with %s; ~%d tokens a request without it",
		c.Always, c.AlwaysTokens, c.Deferred, session.ToolSearchName, c.AllTokens)
}

// stateName is the chat's process's state in words.
func stateName(st chat.ServerState) string {
	switch st {
	case chat.ServerNotStarted:
		return "not started"
	case chat.ServerStarting:
		return "starting"
	case chat.ServerRunning:
		return "running"
	case chat.ServerExited:
		return "exited (restarts on the next call)"
	case chat.ServerDisconnected:
		return "disconnected (reconnects on the next call)"
	case chat.ServerFailed:
		return "failed"
	case chat.ServerDisabled:
		return "disabled"
	case chat.ServerClosed:
		return "closed"
	case chat.ServerWaiting:
		return "waiting for a free slot"
	}
	return fmt.Sprintf("State(%d)", int(st))
}

// mcpServerText is /mcp <name>: the server's line, then the unexpanded
// command line (or URL), the names (never the values) of its env entries
// (or headers), server info, the tools offered and refused, the last
// error, the stderr tail, and the last process that exited on its own
// with its stderr.
func mcpServerText(s chat.ServerStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", s.Display, stateLine(s))
	writeConfigLines(&b, s)
	writeProcessLines(&b, s)
	writeToolLines(&b, s)
	writeTroubleLines(&b, s)
	return strings.TrimRight(b.String(), "\n")
}

// mcpServerReply is /mcp <name> as sent: redacted whole by scrub, then
// capped (no secret is cut in two by the cap).
func mcpServerReply(s chat.ServerStatus, scrub func(string) string) string {
	return chat.CapText(scrub(mcpServerText(s)), maxServerTextBytes)
}

// writeConfigLines writes what the configuration says of the server: its
// internal name, command or URL, working directory, environment (names
// only) and where it was configured.
func writeConfigLines(b *strings.Builder, s chat.ServerStatus) {
	cfg := s.Setup
	if s.Label != "" {
		fmt.Fprintf(b, "internal name: %s (its tools, files and the log use it; /mcp accepts either)\n", s.Name)
	}
	if cfg.Shared {
		fmt.Fprintf(b, "command: %s\n", cfg.Command)
		fmt.Fprintf(b, "url: %s (one process for every chat, on a free port)\n", cfg.URL)
	} else if cfg.URL != "" {
		fmt.Fprintf(b, "url: %s\n", cfg.URL)
		if len(cfg.Headers) > 0 {
			fmt.Fprintf(b, "headers: %s\n", strings.Join(cfg.Headers, ", "))
		}
	} else {
		fmt.Fprintf(b, "command: %s\n", cfg.Command)
	}
	if cfg.Cwd != "" {
		fmt.Fprintf(b, "cwd: %s\n", cfg.Cwd)
	}
	if len(cfg.Env) > 0 {
		fmt.Fprintf(b, "env: %s\n", strings.Join(cfg.Env, ", "))
	}
	fmt.Fprintf(b, "source: %s\n", cfg.Source)
}

// writeProcessLines writes what runs: the server's name and version, its
// resources, the shared process, the chat's process (pid, memory) and
// how often it started and was stopped for other chats.
func writeProcessLines(b *strings.Builder, s chat.ServerStatus) {
	if info := s.Info; info.Name != "" {
		fmt.Fprintf(b, "server: %s %s (protocol %s)\n", info.Name, info.Version, info.ProtocolVersion)
	}
	if r := s.Resources; r != nil {
		fmt.Fprintf(b, "resources: offered (the model lists them with %s and reads them with %s)\n", r.List, r.Read)
	}
	if sh := s.Shared; sh != nil {
		if sh.PID != 0 {
			fmt.Fprintf(b, "shared process: pid %d, %s (PSS, with its children) for %s\n", sh.PID, chat.ByteSize(int(sh.Memory)),
				plural(sh.Users, "session"))
		} else {
			b.WriteString("shared process: not running (it starts with the first call of any chat)\n")
		}
		if sh.Replaced != "" {
			fmt.Fprintf(b, "last replaced: %s UTC: it %s\n", sh.ReplacedAt.UTC().Format("2006-01-02 15:04:05"), sh.Replaced)
		}
	}
	if s.PID != 0 {
		fmt.Fprintf(b, "pid: %d\n", s.PID)
		if s.Memory > 0 {
			fmt.Fprintf(b, "memory: %s (the process and its children, PSS)\n", chat.ByteSize(int(s.Memory)))
		}
	}
	if s.Starts > 0 {
		fmt.Fprintf(b, "starts in this chat: %d\n", s.Starts)
	}
	if s.Evictions > 0 {
		fmt.Fprintf(b, "stopped for other chats (maxLive): %d\n", s.Evictions)
	}
}

// writeToolLines writes the server's tools: the prefix, those offered and
// those that ask first, those hidden, refused or left out.
func writeToolLines(b *strings.Builder, s chat.ServerStatus) {
	if s.Setup.ToolPrefix != "" {
		fmt.Fprintf(b, "tool prefix: %s\n", s.Setup.ToolPrefix)
	}
	if len(s.Offered) > 0 {
		names := make([]string, len(s.Offered))
		for i, t := range s.Offered {
			names[i] = t.Name
		}
		fmt.Fprintf(b, "tools (%d): %s\n", len(names), strings.Join(names, ", "))
	}
	b.WriteString(approvalLine(s.Setup, s.Asking))
	if len(s.Hidden) > 0 {
		fmt.Fprintf(b, "hidden from the model (disabledTools, includeTools, excludeTools): %d: %s\n", len(s.Hidden),
			chat.CapText(strings.Join(s.Hidden, ", "), 1<<10))
	}
	for _, r := range s.Refused {
		fmt.Fprintf(b, "refused: %s\n", r)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(b, "left out: %s\n", w)
	}
}

// approvalLine is /mcp <name>'s line on approvals: the rule, its lists,
// and which of the offered tools wait for a user's yes; "" when none
// ever does.
func approvalLine(cfg chat.ServerSetup, asking []string) string {
	if cfg.Approval == "never" && len(cfg.AlwaysAsk) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "approval: %s", cfg.Approval)
	if len(cfg.AutoApprove) > 0 {
		fmt.Fprintf(&b, "; autoApprove: %s", strings.Join(cfg.AutoApprove, ", "))
	}
	if len(cfg.AlwaysAsk) > 0 {
		fmt.Fprintf(&b, "; alwaysAsk: %s", strings.Join(cfg.AlwaysAsk, ", "))
	}
	if len(asking) == 0 {
		b.WriteString(" — no offered tool asks\n")
	} else {
		fmt.Fprintf(&b, " — asks before %d: %s\n", len(asking), chat.CapText(strings.Join(asking, ", "), 1<<10))
	}
	return b.String()
}

// writeTroubleLines writes what went wrong: the discovery's error, the
// last error, the stderr tail, the last crash and its tail.
func writeTroubleLines(b *strings.Builder, s chat.ServerStatus) {
	if s.DiscoveryError != "" {
		fmt.Fprintf(b, "discovery error:\n%s\n", s.DiscoveryError)
	}
	if s.LastError != "" && s.LastError != s.LastExit {
		fmt.Fprintf(b, "last error: %s\n", s.LastError)
	}
	if len(s.Tail) > 0 {
		fmt.Fprintf(b, "stderr (last lines):\n%s\n", chat.TailText(s.Tail, maxTailBytes))
	}
	if s.LastExit != "" {
		fmt.Fprintf(b, "last crash: %s\n", s.LastExit)
		if len(s.ExitTail) > 0 {
			fmt.Fprintf(b, "its stderr (last lines):\n%s\n", chat.TailText(s.ExitTail, maxTailBytes))
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// unknownServerText is the answer to a command that names no configured
// MCP server: the servers there are.
func unknownServerText(e *chat.UnknownServerError) string {
	if len(e.Configured) == 0 {
		return fmt.Sprintf("no MCP server named %q (none are configured)", e.Name)
	}
	return fmt.Sprintf("no MCP server named %q (configured: %s)", e.Name, strings.Join(e.Configured, ", "))
}
