package mcpclient

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// What /mcp tells of the servers, as data (chat.MCPStatus): the bot says
// it in words. It costs no model call and never waits for a server: a
// server still being discovered says so.

// MCPStatus is every configured server's state in this session and the
// tools the model is offered (refused ones, such as name clashes, apart),
// and what the kernel's OOM killer did.
func (s *Session) MCPStatus() chat.MCPStatus {
	cats := s.client.Lookup()
	var out chat.MCPStatus
	if len(cats) == 0 {
		return out
	}
	_, refusals := s.client.resolve(cats)
	out.Servers = make([]chat.ServerStatus, 0, len(cats))
	for _, sc := range cats {
		st, _ := s.Status(sc.Config.Name)
		out.Servers = append(out.Servers, s.serverStatus(sc, refusals, st))
	}
	if w := s.client.oom; w != nil {
		out.OutOfMemory = w.status()
	}
	return out
}

// ServerStatus is the server name (its name or its label): MCPStatus's of
// it, with its configuration, what runs, its tools and what went wrong.
func (s *Session) ServerStatus(name string) (chat.ServerStatus, error) {
	cfg, ok := s.client.Server(name)
	if !ok {
		return chat.ServerStatus{}, s.client.unknownServer(name)
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
	st, _ := s.Status(name)
	out := s.serverStatus(sc, all, st)
	out.ServerDetails = s.serverDetails(cfg, sc, refusedOf(all, name), st)
	return out, nil
}

// serverStatus is what /mcp's line of one server says.
func (s *Session) serverStatus(sc ServerCatalog, refusals []Refusal, st ConnStatus) chat.ServerStatus {
	cfg := sc.Config
	out := chat.ServerStatus{Name: cfg.Name, Display: cfg.Display(), Ref: cfg.Ref(), Label: cfg.Label,
		Enabled: cfg.Enabled, DisabledHint: cfg.DisabledHint, Discovering: sc.Discovering,
		State: serverState(st.State), LastError: st.LastErr}
	if nl, ok := needsLogin(sc.Err); ok {
		out.Login = &chat.LoginNeeded{Reason: nl.Reason, Tools: len(sc.Catalog.Tools)}
	}
	if sc.Err != nil {
		out.DiscoveryError = sc.Err.Error()
	}
	refused := refusedOf(refusals, cfg.Name)
	offered := offeredTools(sc.Catalog.Tools, refused)
	out.Offered = catalogTools(offered)
	out.OfferedTokens = s.client.ToolTokens(offered)
	for _, r := range refused {
		out.Refused = append(out.Refused, r.String())
	}
	if ch := s.client.auth.challenge(cfg.Name); ch.InsufficientScope() && cfg.URL != "" {
		out.ScopeShort, out.Scope = true, ch.Scope
	}
	out.Live, out.Limit, out.Waiting = s.client.Usage(cfg.Name)
	return out
}

// serverState is st as the chat's status says it.
func serverState(st State) chat.ServerState {
	switch st {
	case StateNotStarted:
		return chat.ServerNotStarted
	case StateStarting:
		return chat.ServerStarting
	case StateRunning:
		return chat.ServerRunning
	case StateExited:
		return chat.ServerExited
	case StateDisconnected:
		return chat.ServerDisconnected
	case StateFailed:
		return chat.ServerFailed
	case StateDisabled:
		return chat.ServerDisabled
	case StateClosed:
		return chat.ServerClosed
	case StateWaiting:
		return chat.ServerWaiting
	}
	return chat.ServerState(st)
}

// serverDetails is what /mcp <name> adds: the unexpanded command line (or
// URL), the names (never the values) of its env entries (or headers),
// server info, the tools offered and refused, the last error, the stderr
// tail, and the last process that exited on its own with its stderr.
func (s *Session) serverDetails(cfg mcpconfig.ServerConfig, sc ServerCatalog, refusals []Refusal, st ConnStatus) chat.ServerDetails {
	d := chat.ServerDetails{Setup: serverSetup(cfg),
		PID: st.PID, Starts: st.Starts, Evictions: st.Evictions,
		Hidden: sc.Catalog.Hidden, Warnings: sc.Catalog.Warnings,
		Tail: st.Tail, LastExit: st.LastExit, ExitTail: st.ExitTail}
	if sc.Catalog.ServerInfo.Resources {
		d.Resources = &chat.ResourceTools{List: ListResourcesTool, Read: ReadResourceTool}
	}
	info := st.Info
	if info.Name == "" {
		info = sc.Catalog.ServerInfo
	}
	d.Info = chat.ServerInfo{Name: info.Name, Version: info.Version, ProtocolVersion: info.ProtocolVersion}
	if h := s.client.sp.hosts[cfg.Name]; h != nil {
		sh := &chat.SharedProcess{}
		sh.PID, sh.Users, sh.Memory = h.status()
		sh.Replaced, sh.ReplacedAt = h.lastReplaced()
		d.Shared = sh
	}
	if st.PID != 0 {
		if m, ok := s.Memory(cfg.Name); ok && m > 0 {
			d.Memory = m
		}
	}
	for _, t := range offeredTools(sc.Catalog.Tools, refusals) {
		if cfg.ApprovalFor(t.MCPName, t.Name, t.Annotations.ReadOnly()) != mcpconfig.RunFreely {
			d.Asking = append(d.Asking, t.Name)
		}
	}
	return d
}

// serverSetup is what cfg says, with the names of its env entries and
// headers only.
func serverSetup(cfg mcpconfig.ServerConfig) chat.ServerSetup {
	out := chat.ServerSetup{URL: cfg.URL, Shared: cfg.Shared, Cwd: cfg.Cwd, Env: sortedKeys(cfg.Env),
		Source: firstNonEmpty(cfg.Origin, string(cfg.Source)), ToolPrefix: cfg.ToolPrefix,
		Approval: string(cfg.Approval), AutoApprove: cfg.AutoApprove, AlwaysAsk: cfg.AlwaysAsk}
	if cfg.Shared || cfg.URL == "" {
		out.Command = commandLine(cfg)
	}
	if len(cfg.Headers) > 0 {
		out.Headers = sortedKeys(cfg.Headers)
	}
	if out.Approval == "" {
		out.Approval = string(mcpconfig.ApprovalNever)
	}
	return out
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

// unknownServer is the error of a command that names no configured
// server: it lists the configured ones.
func (c *Client) unknownServer(name string) error {
	names := make([]string, 0, len(c.servers))
	for _, cfg := range c.servers {
		names = append(names, cfg.Display())
	}
	return &chat.UnknownServerError{Name: name, Configured: names}
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
