package mcpclient

import (
	"fmt"
	"log/slog"
	"strconv"
)

// MaxToolNameLen is the longest exposed tool name. Providers allow 64, but
// names up to 48 survive the Claude Code provider's aliasing readably
// (spec §4).
const MaxToolNameLen = 48

// SanitizeToolName builds the exposed name prefix+mcpName: every character
// outside [A-Za-z0-9_-] becomes '_' (one '_' per rune, and one per byte of
// invalid UTF-8), and the result is cut to MaxToolNameLen characters. A name
// that would be empty becomes "_", so the result is always a valid tool name.
func SanitizeToolName(prefix, mcpName string) string {
	if len(prefix)+len(mcpName) <= MaxToolNameLen && validToolName(prefix) && validToolName(mcpName) {
		if prefix == "" {
			if mcpName == "" {
				return "_"
			}
			return mcpName
		}
		return prefix + mcpName
	}
	b := make([]byte, 0, min(len(prefix)+len(mcpName), MaxToolNameLen))
	b = appendToolName(b, prefix)
	b = appendToolName(b, mcpName)
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func appendToolName(b []byte, s string) []byte {
	for _, r := range s {
		if len(b) >= MaxToolNameLen {
			break
		}
		if toolNameRune(r) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return b
}

func validToolName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !toolNameRune(rune(s[i])) {
			return false
		}
	}
	return true
}

func toolNameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}

// ExposeTools returns a copy of one server's tools with Server set and Name
// filled with the sanitised, prefixed name. MCPName is left as the server
// spells it: the server is always called with it.
//
// Names that collide within the server after sanitising keep the first tool
// on the plain name; the later ones get _2, _3, … (the base is shortened so
// the suffix fits in MaxToolNameLen). A suffixed name never takes a name
// that another tool of the server has on its own: given "a.b", "a_b" and
// "a_b_2", the names are a_b, a_b_3 and a_b_2.
func ExposeTools(server, prefix string, tools []Tool) []Tool {
	out := make([]Tool, len(tools))
	bases := make([]string, len(tools))
	taken := make(map[string]bool, len(tools))
	dup := make([]bool, len(tools))
	for i, t := range tools {
		bases[i] = SanitizeToolName(prefix, t.MCPName)
		if taken[bases[i]] {
			dup[i] = true
		}
		taken[bases[i]] = true
	}
	next := map[string]int{}
	for i, t := range tools {
		t.Server = server
		t.Name = bases[i]
		if dup[i] {
			k := max(next[bases[i]], 2)
			for ; ; k++ {
				cand := suffixToolName(bases[i], k)
				if !taken[cand] {
					taken[cand] = true
					t.Name = cand
					break
				}
			}
			next[bases[i]] = k + 1
		}
		out[i] = t
	}
	return out
}

// suffixToolName appends _k to base, shortening base so the result fits in
// MaxToolNameLen. Different k give different names (k follows the last '_').
func suffixToolName(base string, k int) string {
	suf := "_" + strconv.Itoa(k)
	if len(base)+len(suf) > MaxToolNameLen {
		base = base[:MaxToolNameLen-len(suf)]
	}
	return base + suf
}

// RefusalReason says why a tool was not registered.
type RefusalReason string

const (
	// RefusedBuiltin: the exposed name is a built-in tool's. Setting the
	// server's toolPrefix fixes it.
	RefusedBuiltin RefusalReason = "builtin"
	// RefusedTaken: an earlier MCP tool (of an earlier server in source
	// order, or an earlier tool of the same server) has the name.
	RefusedTaken RefusalReason = "taken"
)

// Refusal is an MCP tool that ResolveTools did not register. /mcp <name>
// shows a server's refusals with String.
type Refusal struct {
	Server  string // the server whose tool was refused
	MCPName string // the tool's name on that server
	Name    string // the exposed name that clashed
	Reason  RefusalReason
	// Owner is the server that keeps the name (RefusedTaken); empty for a
	// built-in.
	Owner string
	// Prefix is the toolPrefix suggested for Server: with it, its refused
	// tools' names are free (see suggestPrefixes).
	Prefix string
	// Label and OwnerLabel are the names the entries of Server and Owner
	// gave them, when other than theirs (mcpconfig.ServerConfig.Label).
	Label, OwnerLabel string
}

// String is the operator's and the /mcp reader's explanation, with the fix.
func (r Refusal) String() string {
	server, owner, prefix := firstNonEmpty(r.Label, r.Server), firstNonEmpty(r.OwnerLabel, r.Owner), r.Prefix
	if prefix == "" {
		prefix = prefixBase(r.Server, r.Label) + "_"
	}
	switch {
	case r.Reason == RefusedBuiltin:
		return fmt.Sprintf("tool %q of MCP server %q not registered: %q is a built-in tool; set \"toolPrefix\" for server %q (e.g. %q)",
			r.MCPName, server, r.Name, server, prefix)
	case r.Owner == r.Server:
		return fmt.Sprintf("tool %q of MCP server %q not registered: the server lists the name %q twice",
			r.MCPName, server, r.Name)
	default:
		return fmt.Sprintf("tool %q of MCP server %q not registered: MCP server %q already provides %q (the first server wins); set \"toolPrefix\" for server %q (e.g. %q)",
			r.MCPName, server, owner, r.Name, server, prefix)
	}
}

// ResolveTools merges the catalogues of a session's servers, in source order
// (config, preset, settings), into the MCP tools to register. Tool names must
// already be exposed (ExposeTools). A tool whose name is one of builtins is
// refused, as is a tool whose name an earlier catalogue already uses (the
// first server wins). Each refusal is logged as a warning naming both sides
// and suggesting a toolPrefix, and returned for /mcp. A nil logger logs
// nothing. When a catalogue's server offers resources, the resource tools
// come last (resources.go), and their names are refused as a built-in's.
func ResolveTools(catalogs []Catalog, builtins []string, logger *slog.Logger) ([]Tool, []Refusal) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := 0
	for _, c := range catalogs {
		n += len(c.Tools)
	}
	isBuiltin := make(map[string]bool, len(builtins)+2)
	for _, b := range builtins {
		isBuiltin[b] = true
	}
	var resources []Tool
	if servers := resourceServers(catalogs); len(servers) > 0 {
		resources = resourceTools(servers)
		for _, t := range resources {
			isBuiltin[t.Name] = true
		}
	}
	owner := make(map[string]string, n)
	tools := make([]Tool, 0, n)
	var refused []Refusal
	for _, c := range catalogs {
		for _, t := range c.Tools {
			if t.Server == "" {
				t.Server = c.Server
			}
			if t.Name == "" {
				t.Name = SanitizeToolName("", t.MCPName)
			}
			r := Refusal{Server: t.Server, MCPName: t.MCPName, Name: t.Name}
			if isBuiltin[t.Name] {
				r.Reason = RefusedBuiltin
			} else if o, ok := owner[t.Name]; ok {
				r.Reason, r.Owner = RefusedTaken, o
			} else {
				owner[t.Name] = t.Server
				tools = append(tools, t)
				continue
			}
			refused = append(refused, r)
		}
	}
	suggestPrefixes(catalogs, refused, owner, isBuiltin)
	for _, r := range refused {
		logger.Warn(r.String(), "server", r.Server, "tool", r.MCPName, "name", r.Name,
			"reason", string(r.Reason), "owner", r.Owner)
	}
	return append(tools, resources...), refused
}
