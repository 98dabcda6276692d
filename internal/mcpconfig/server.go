package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Defaults applied when an entry leaves a field out.
const (
	DefaultStartupTimeout = 60 * time.Second
	// DefaultInstallerStartupTimeout is the start-up limit of an entry run
	// by a package runner (npx, uvx, bunx, pnpm dlx): its first start may
	// download and build the package (seen: four npx servers installing at
	// once took 42–49 s, a native build 2 min 41 s).
	DefaultInstallerStartupTimeout = 300 * time.Second
	DefaultCallTimeout             = 120 * time.Second
	DefaultIdleTimeout             = 1800 * time.Second
	// DefaultStderrLevel is the level a server's stderr lines are logged
	// at: debug, because servers write banners, their own INFO lines and
	// even the user's text there. A JSON line with a "level" field is
	// logged at that level instead, and a server that exits or fails to
	// start has its stderr tail in the warning that says so.
	DefaultStderrLevel = slog.LevelDebug
)

// ProtocolVersions are the MCP protocol versions an entry may pin with
// protocolVersion, oldest first.
var ProtocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// MaxServerNameLen is the longest internal server name.
const MaxServerNameLen = 64

// MaxServerLabelLen is the longest name an entry may be given in another
// client's spelling (a Label).
const MaxServerLabelLen = 256

// Source names where an entry came from. Sources are merged in the order
// config → preset → settings; the first source wins a name.
type Source string

const (
	// SourceConfig is the config file's mcp.servers and MCP__SERVERS__… variables.
	SourceConfig Source = "config"
	// SourcePreset is a preset such as playwright.
	SourcePreset Source = "preset"
	// SourceSettings is settings.json in the agent directory.
	SourceSettings Source = "settings"
)

// ServerConfig is one MCP server entry after parsing and defaulting.
// Command, Args, Cwd, Env, URL and Headers are unexpanded: ${workspace} and
// ${env:NAME} are expanded when a process is spawned (see Expand).
type ServerConfig struct {
	// Name is the server's internal name: what tools, files, logs and
	// commands use. It is the name the entry was given when that is a
	// valid server name (ValidServerName); otherwise a safe form of it
	// (SafeServerName, made unique by Merge), and Label holds the original.
	Name string
	// Label is the name the entry was given when it is not a valid server
	// name (another client's, such as Cline's "github.com/upstash/context7-mcp");
	// empty otherwise. /mcp shows it, and lookups accept it (see Matches).
	Label  string
	Source Source
	// Origin is a human description of the source, such as a file path
	// ("settings /root/.volcanic/agent/settings.json"), used in messages.
	Origin string

	Command string
	Args    []string
	// Env is applied over the filtered host environment. A nil value
	// removes the variable (JSON null).
	Env map[string]*string
	// Cwd is the working directory of a session process; empty means
	// ${workspace}.
	Cwd string

	// URL is set instead of Command for a server reached over streamable
	// HTTP; Headers go with every request.
	URL     string
	Headers map[string]string

	ToolPrefix      string
	Enabled         bool
	Parallel        bool
	StartupTimeout  time.Duration
	CallTimeout     time.Duration
	IdleTimeout     time.Duration // 0 = never stop an idle process
	StderrLevel     slog.Level
	PromptSection   string
	ProtocolVersion string // optional pin; empty = the fast default
	// Sampling lets the server ask the bot's model for completions
	// (sampling/createMessage), counted in the chat's usage; off: refused.
	Sampling bool
	// OAuth is how a url server's login identifies the bot (zero: dynamic
	// registration, no scopes of its own).
	OAuth OAuthConfig
	// Roots declares the roots capability: the server's roots/list is
	// answered with the chat's workspace (a discovery's temporary
	// folder). On by default for a command, off for a url; a Shared
	// server always has it.
	Roots bool
	// MaxLive is the most processes of the server that run at once,
	// across every chat; 0: no ceiling (mcpclient.SizeCeilings gives
	// one from the memory budget to a server without one).
	MaxLive int
	// Memory is what the server's processes are assumed to take, for
	// the budget (the zero value: mcpclient's assumption).
	Memory Footprint

	// AlwaysLoad names the tools of the server that are offered with
	// their schemas in every request even when tool search defers the
	// others: the server's own names or the exposed (prefixed) ones.
	AlwaysLoad []string
	// DeferLoading overrides the tool-search rule for this server: true
	// defers its tools (but AlwaysLoad) whenever tool search is not off,
	// false offers them all in every request; nil follows the rule.
	DeferLoading *bool

	// Approval is which of the server's tool calls wait for a user's
	// approval in the chat: ApprovalNever, ApprovalWrites or
	// ApprovalAlways (see ApprovalFor).
	Approval Approval
	// AutoApprove are the tools (globs over the server's names and the
	// exposed ones) that run without asking; Cline's autoApprove and Roo
	// Code's alwaysAllow are this field.
	AutoApprove []string
	// AlwaysAsk are the tools (globs) asked about at every call, whatever
	// Approval says; it wins over AutoApprove, and "always in this chat"
	// is not offered for them.
	AlwaysAsk []string
	// DisabledTools are the server's tools (by their MCP names) never
	// offered to the model (Roo Code's and Windsurf's disabledTools; the
	// browser preset hides the storage tools it calls itself).
	DisabledTools []string
	// IncludeTools and ExcludeTools are globs over the server's tool names
	// (MatchTool): when IncludeTools is given only the tools it matches are
	// offered, and ExcludeTools hides what it matches (it wins). What they
	// hide is counted with DisabledTools.
	IncludeTools, ExcludeTools []string

	// Shared makes the entry one process for every chat instead of one per
	// chat: Command, Args, Env and Cwd (absolute) start it once, on first
	// use, with ${port} a free port on 127.0.0.1, and each chat reaches it
	// at URL (with ${port}) over streamable HTTP, in an MCP session of its
	// own whose root is the chat's workspace. The process is stopped when
	// no chat has used it for IdleTimeout, and restarted when it died. Set
	// by a preset (the shared browser), not by settings.json.
	Shared bool
	// HostEnv, for a Shared entry, names the variable of the process's
	// environment that each start gives a fresh random host name
	// ("vb-<128 random bits in hex>.invalid"), the one Host its HTTP
	// listener must accept (the shared browser:
	// PLAYWRIGHT_MCP_ALLOWED_HOSTS). Every chat's connection sends it as
	// the Host of its requests to 127.0.0.1:${port}. A browser cannot: Host
	// is a header no page may set, a browser adds the port to it, and the
	// name resolves nowhere. So no page the shared browser shows — and no
	// model call through one — opens a session of its own on the server.
	// The name is in the environment only (a process's command line is
	// readable by every user of the host), and a registered secret.
	HostEnv string
	// WarmCall, when set, is called after a prewarm starts the process, so
	// that what the server starts lazily on its first call (the browser)
	// starts too; its result is dropped.
	WarmCall *ToolCall
	// PrewarmOnURL starts the chat's process when a message holding a URL
	// arrives, alongside the model's first step (the browser), besides
	// the prewarm every server gets when the chat used it recently.
	PrewarmOnURL bool
	// State, when set, carries a chat's state across the server's stops
	// (the shared browser's cookies and local storage, whose contexts live
	// in memory).
	State *StateTools
	// Output are the workspace folders where the server saves files it
	// names itself (the browser's page snapshots, console logs and
	// downloads): they count against the chat's disk budget and are pruned
	// oldest first, and a log of theirs (*.log) that keeps growing with no
	// call in flight gets the chat's process stopped. Set by a preset.
	Output []OutputDir

	// Warnings are what parsing accepted but the operator should know
	// (a field of another client kept but not applied yet). Logged at start
	// and printed by check.
	Warnings []string

	// ProcessNoun is what one of the server's processes is to the user
	// ("browser"), in messages such as "Waiting for a free browser";
	// empty: "<name> process".
	ProcessNoun string

	// DisabledHint is shown by /mcp for a disabled entry, e.g.
	// "set PLAYWRIGHT_ENABLED=true".
	DisabledHint string
	// BeforeStart, when set, runs before each process of the server starts,
	// with the expanded spawn: a preset prepares what it owns there (the
	// browser preset clears a stale profile lock). An error fails the
	// start with that message.
	BeforeStart func(Spawn) error
}

// ToolCall is a call the bot makes itself: a tool (its MCP name) and its
// arguments (a JSON object).
type ToolCall struct {
	Tool string
	Args json.RawMessage
}

// OutputDir is a workspace folder of a server's own files (see
// ServerConfig.Output).
type OutputDir struct {
	Dir string // relative to the workspace, '/'-separated
	// Match selects the server's files in Dir by their base name; nil:
	// every file in it and under it.
	Match func(name string) bool
}

// StateTools are the tools that save and restore a chat's state, kept in
// File in the chat's private folder (out of every server's reach): after
// each start of the chat's connection Restore is called when the chat has
// a saved state, and before each graceful stop (idle, a ceiling's
// eviction, /mcp restart, /new, shutdown) Save is. A crash loses what
// changed since the last save.
//
// The server reads and writes only inside the chat's workspace, so both
// tools are given {"filename": <an unpredictable name in the workspace>}:
// Save's file is taken out at once (checked, then put in place of File
// whole: the last good state survives any failed save), Restore's is a
// copy of File made for the call; neither outlives its call, and no other
// call of the chat runs on the connection meanwhile.
type StateTools struct {
	Save, Restore string
	File          string // the file's name in the chat's private folder
	// Valid checks what Save wrote before it replaces File (nil: any
	// JSON): a file cut short, or not a state, is refused.
	Valid func([]byte) error
	// Close is the tool that ends the server's context for the chat (the
	// browser's browser_close): the state is saved before it and restored
	// before the next call. A context the server opens unasked (its
	// browser crashed) gets the state restored and its call reported.
	Close string
}

// Digest is the catalogue cache key of c: a hex SHA-256 of the name and the
// unexpanded command, args, env (sorted by name, null distinct from ""),
// cwd, URL, headers, tool prefix and pinned protocol version. ${env:…}
// values are unexpanded here, so host secrets never enter it; ${workspace}
// is unexpanded too, so every chat shares one key.
func (c ServerConfig) Digest() string {
	type kv struct {
		K string  `json:"k"`
		V *string `json:"v"`
	}
	env := make([]kv, 0, len(c.Env))
	for k, v := range c.Env {
		env = append(env, kv{k, v})
	}
	slices.SortFunc(env, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	args := c.Args
	if args == nil {
		args = []string{}
	}
	headers := make([]kv, 0, len(c.Headers))
	for k, v := range c.Headers {
		headers = append(headers, kv{k, &v})
	}
	slices.SortFunc(headers, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	key := struct {
		V               int      `json:"v"`
		Name            string   `json:"name"`
		Command         string   `json:"command"`
		Args            []string `json:"args"`
		Env             []kv     `json:"env"`
		Cwd             string   `json:"cwd"`
		ToolPrefix      string   `json:"toolPrefix"`
		ProtocolVersion string   `json:"protocolVersion"`
		URL             string   `json:"url,omitempty"`
		Headers         []kv     `json:"headers,omitempty"`
	}{1, c.Name, c.Command, args, env, c.Cwd, c.ToolPrefix, c.ProtocolVersion, c.URL, headers}
	b, err := json.Marshal(key)
	if err != nil { // cannot happen: strings only
		panic("mcpconfig: digest: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Installer reports whether c runs a package runner that may download the
// package on its first start (npx, uvx, bunx, pnpm dlx, …).
func (c ServerConfig) Installer() bool {
	if c.URL != "" {
		return false
	}
	switch strings.TrimSuffix(filepath.Base(c.Command), ".cmd") {
	case "npx", "uvx", "bunx", "pipx":
		return true
	case "pnpm", "yarn", "uv":
		return len(c.Args) > 0 && (c.Args[0] == "dlx" || c.Args[0] == "tool")
	}
	return false
}

// Display is the name the user gave the server: Label, or Name.
func (c ServerConfig) Display() string {
	if c.Label != "" {
		return c.Label
	}
	return c.Name
}

// Matches reports whether name designates the server: its name as the
// user wrote it, or its internal name.
func (c ServerConfig) Matches(name string) bool {
	return name != "" && (name == c.Name || name == c.Label)
}

// Ref is the name to type after /mcp for the server: its name as the
// user wrote it, unless that holds a space (a command's arguments are
// split at spaces), then its internal name.
func (c ServerConfig) Ref() string {
	if c.Label != "" && !strings.ContainsFunc(c.Label, unicode.IsSpace) {
		return c.Label
	}
	return c.Name
}

// SortServers sorts by name, case-insensitively, then ordinally, so
// "B", "a", "A" become "A", "a", "B".
func SortServers(servers []ServerConfig) {
	slices.SortStableFunc(servers, func(a, b ServerConfig) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// ValidServerName reports whether name is an acceptable server name: 1 to
// MaxServerNameLen characters from [A-Za-z0-9._-], starting with a letter or
// a digit. Names are compared ordinally (case-sensitively) everywhere.
func ValidServerName(name string) bool {
	if name == "" || len(name) > MaxServerNameLen || !isAlnum(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ParseStderrLevel maps a stderrLevel value (debug, info, warn, warning,
// error; case-insensitive; "information" is accepted too) to a slog level.
func ParseStderrLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true
	case "info", "information":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

// MatchTool reports whether the glob pattern matches a tool name: '*'
// matches any run of characters (none included), '?' any one character,
// everything else itself (case-sensitively, '/' and '.' included).
func MatchTool(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	i, j := 0, 0
	star, mark := -1, 0 // the last '*' of p seen, and where in n its run began
	for j < len(n) {
		switch {
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case i < len(p) && (p[i] == '?' || p[i] == n[j]):
			i++
			j++
		case star >= 0: // the '*' takes one more character
			mark++
			i, j = star+1, mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// OAuthConfig is the client identity of a url server's OAuth login.
type OAuthConfig struct {
	ClientID, ClientSecret string // pre-registered; empty: registered at the login
	ClientMetadataURL      string // a client ID metadata document, where the server supports one
	Scopes                 []string
}

// Footprint is the memory a server's processes take, as the memory budget
// counts it: Fixed once (a Shared server's one process), PerLive for each
// live process (a Shared server: each chat's session, such as a browser
// context). Bytes.
type Footprint struct {
	Fixed, PerLive int64
}
