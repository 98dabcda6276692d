package bot

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
	}
}

func tools(names ...string) []chat.CatalogTool {
	out := make([]chat.CatalogTool, len(names))
	for i, n := range names {
		out[i] = chat.CatalogTool{Name: n}
	}
	return out
}

func TestMCPStateLines(t *testing.T) {
	running := chat.ServerStatus{Name: "fetch", Display: "fetch", Ref: "fetch", Enabled: true, State: chat.ServerRunning}
	with := func(f func(*chat.ServerStatus)) chat.ServerStatus {
		s := running
		f(&s)
		return s
	}
	tests := []struct {
		name string
		s    chat.ServerStatus
		want string
	}{
		{"disabled", chat.ServerStatus{}, "disabled"},
		{"disabled with a hint", chat.ServerStatus{DisabledHint: "PLAYWRIGHT_ENABLED=false"}, "disabled (PLAYWRIGHT_ENABLED=false)"},
		{"discovering", with(func(s *chat.ServerStatus) { s.Discovering = true }), "starting (listing its tools)"},
		{"needs login", with(func(s *chat.ServerStatus) { s.Name, s.Ref, s.Login = "my-srv", "srv", &chat.LoginNeeded{} }),
			"needs login: an admin sends /mcp login srv (or runs `volcanicbot login my-srv` on the bot's host)"},
		{"needs login again", with(func(s *chat.ServerStatus) { s.Login = &chat.LoginNeeded{Reason: "invalid_grant", Tools: 1} }),
			"needs login: an admin sends /mcp login fetch (or runs `volcanicbot login fetch` on the bot's host); invalid_grant; its 1 tool from the last login say so when called"},
		{"discovery failed", with(func(s *chat.ServerStatus) { s.DiscoveryError = "exited (1)\nstderr: boom" }), "failed: exited (1)"},
		{"process failed", with(func(s *chat.ServerStatus) { s.State, s.LastError = chat.ServerFailed, "start: no such file\nmore" }),
			"failed: start: no such file, 0 tools"},
		{"not started", with(func(s *chat.ServerStatus) { s.State = chat.ServerNotStarted }), "not started, 0 tools"},
		{"every state", with(func(s *chat.ServerStatus) { s.State = chat.ServerExited }), "exited (restarts on the next call), 0 tools"},
		{"disconnected", with(func(s *chat.ServerStatus) { s.State = chat.ServerDisconnected }), "disconnected (reconnects on the next call), 0 tools"},
		{"waiting", with(func(s *chat.ServerStatus) { s.State = chat.ServerWaiting }), "waiting for a free slot, 0 tools"},
		{"unknown state", with(func(s *chat.ServerStatus) { s.State = 42 }), "State(42), 0 tools"},
		{"counted by the adapter", with(func(s *chat.ServerStatus) { s.Offered, s.OfferedTokens = tools("a"), 120 }),
			"running, 1 tool (~120 tokens a request)"},
		{"none deferred", with(func(s *chat.ServerStatus) {
			s.Offered, s.Cost = tools("a", "b"), &chat.ToolCost{Always: 2, AlwaysTokens: 836}
		}), "running, 2 tools (~836 tokens a request)"},
		{"all deferred", with(func(s *chat.ServerStatus) {
			s.Offered, s.Cost = tools("a", "b"), &chat.ToolCost{Deferred: 2, AllTokens: 900}
		}), "running, 2 tools (all deferred: found with tool_search; ~900 tokens a request without it)"},
		{"some deferred", with(func(s *chat.ServerStatus) {
			s.Offered, s.Cost = tools("a", "b", "c"), &chat.ToolCost{Always: 1, AlwaysTokens: 300, Deferred: 2, AllTokens: 900}
		}), "running, 3 tools (1 in every request, ~300 tokens; 2 deferred, found with tool_search; ~900 tokens a request without it)"},
		{"refused", with(func(s *chat.ServerStatus) { s.Refused = []string{"x", "y"} }), "running, 0 tools (2 refused: see /mcp fetch)"},
		{"scope", with(func(s *chat.ServerStatus) { s.ScopeShort, s.Scope = true, "mcp:read mcp:write" }),
			`running, 0 tools; some calls need a login with more permissions (scope "mcp:read mcp:write"): an admin sends /mcp login fetch`},
		{"live", with(func(s *chat.ServerStatus) { s.Live, s.Limit = 2, 2 }), "running, 0 tools; 2 of 2 live across chats"},
		{"waiting calls", with(func(s *chat.ServerStatus) { s.Live, s.Limit, s.Waiting = 1, 1, 3 }),
			"running, 0 tools; 1 of 1 live across chats, 3 waiting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stateLine(tt.s); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestMCPStatusText(t *testing.T) {
	if got := mcpStatusText(chat.MCPStatus{}); got != "No MCP servers are configured. Add them to mcpServers in settings.json (see docs/mcp.md)." {
		t.Errorf("no servers: %q", got)
	}
	at := time.Date(2026, 5, 1, 14, 30, 5, 0, time.FixedZone("CEST", 2*3600))
	st := chat.MCPStatus{Servers: []chat.ServerStatus{
		{Name: "fetch", Display: "fetch", Enabled: true, State: chat.ServerRunning, Offered: tools("fetch"), Cost: &chat.ToolCost{Always: 1, AlwaysTokens: 95}},
		{Name: "my_server", Display: "my server", Ref: "my_server"},
	}}
	tests := []struct {
		oom  *chat.OOMKills
		want string
	}{
		{nil, ""},
		{&chat.OOMKills{Kills: 1, Last: at},
			"\n⚠ Out of memory: the kernel's OOM killer ended 1 process under the bot's memory limit (the last at 12:30:05 UTC). Lower the ceilings (maxLive, PLAYWRIGHT_MAX_BROWSERS) or give the bot more memory."},
		{&chat.OOMKills{Kills: 3, Last: at, Servers: []string{"a", "b", "c"}},
			"\n⚠ Out of memory: the kernel's OOM killer ended 3 processes under the bot's memory limit (the last at 12:30:05 UTC; a, b and c's). Lower the ceilings (maxLive, PLAYWRIGHT_MAX_BROWSERS) or give the bot more memory."},
		{&chat.OOMKills{Machine: true, Last: at, Servers: []string{"playwright"}},
			"\n⚠ Out of memory: the kernel's OOM killer ended MCP server processes: the machine ran out of memory (the last at 12:30:05 UTC; playwright's). Lower the ceilings (maxLive, PLAYWRIGHT_MAX_BROWSERS) or give the bot more memory."},
	}
	for _, tt := range tests {
		st.OutOfMemory = tt.oom
		want := "MCP servers:\n• fetch: running, 1 tool (~95 tokens a request)\n• my server: disabled" + tt.want
		if got := mcpStatusText(st); got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	}
}

// Every line /mcp <name> can write, for a local server, a remote one and
// a shared one.
func TestMCPServerText(t *testing.T) {
	replaced := time.Date(2026, 5, 1, 14, 30, 5, 0, time.UTC)
	local := chat.ServerStatus{Name: "fs", Display: "file system", Ref: "fs", Label: "file system", Enabled: true,
		State: chat.ServerRunning, LastError: "exited (3)", Offered: tools("fs_read", "fs_write"),
		Cost: &chat.ToolCost{Always: 2, AlwaysTokens: 410}, Refused: []string{`tool "x" of MCP server "fs" not registered: …`},
		ServerDetails: chat.ServerDetails{
			Setup: chat.ServerSetup{Command: `npx -y "@scope/server fs"`, Cwd: "/srv", Env: []string{"A_KEY", "B"},
				Source: "settings.json", ToolPrefix: "fs_", Approval: "writes", AutoApprove: []string{"read"}, AlwaysAsk: []string{"rm"}},
			Info:      chat.ServerInfo{Name: "fs-server", Version: "1.2.3", ProtocolVersion: "2025-11-25"},
			Resources: &chat.ResourceTools{List: "list_mcp_resources", Read: "read_mcp_resource"},
			PID:       4242, Memory: 3 << 20, Starts: 2, Evictions: 1,
			Asking:   []string{"fs_write"},
			Hidden:   []string{"fs_admin", strings.Repeat("h", 1100)},
			Warnings: []string{"tool \"huge\": its schema is over 65536 bytes"},
			Tail:     []string{"line 1", "line 2"},
			LastExit: "exited (3)", ExitTail: []string{strings.Repeat("x", 5000)},
		}}
	golden(t, "mcp_server_local.txt", mcpServerText(local))

	remote := chat.ServerStatus{Name: "api", Display: "api", Ref: "api", Enabled: true, State: chat.ServerNotStarted,
		DiscoveryError: "connect: refused\nsecond line",
		ServerDetails: chat.ServerDetails{
			Setup: chat.ServerSetup{URL: "https://mcp.example.com/mcp", Headers: []string{"Authorization"}, Source: "config",
				Approval: "never", AlwaysAsk: []string{"delete"}},
			Tail: make([]string, 0),
		}}
	golden(t, "mcp_server_remote.txt", mcpServerText(remote))

	lines := make([]string, 600)
	for i := range lines {
		lines[i] = "stderr line of some length " + strings.Repeat("-", i%7)
	}
	shared := chat.ServerStatus{Name: "browser", Display: "browser", Ref: "browser", Enabled: true, State: chat.ServerRunning,
		ServerDetails: chat.ServerDetails{
			Setup:  chat.ServerSetup{Command: "playwright-mcp --port 0", URL: "http://127.0.0.1:0/mcp", Shared: true, Source: "preset", Approval: "always"},
			Shared: &chat.SharedProcess{PID: 77, Users: 1, Memory: 900 << 10, Replaced: "did not answer for 30s", ReplacedAt: replaced},
			Tail:   lines,
		}}
	golden(t, "mcp_server_shared.txt", mcpServerText(shared))

	shared.Shared = &chat.SharedProcess{Users: 3}
	shared.Tail = nil
	got := mcpServerText(shared)
	if !strings.Contains(got, "\nshared process: not running (it starts with the first call of any chat)\n") ||
		!strings.Contains(got, "\napproval: always — no offered tool asks") {
		t.Errorf("a shared server not running:\n%s", got)
	}
}

// /mcp <name> is redacted before it is capped: a secret across the cut
// is not left half there.
func TestMCPServerReplyIsCappedAfterRedaction(t *testing.T) {
	secret := "sk-0123456789abcdef"
	s := chat.ServerStatus{Display: "loud", Enabled: true, DiscoveryError: strings.Repeat("e", maxServerTextBytes-24) + secret + strings.Repeat("e", 5000)}
	scrub := strings.NewReplacer(secret, "[REDACTED]").Replace
	got := mcpServerReply(s, scrub)
	if len(got) > maxServerTextBytes+64 || strings.Contains(got, secret[:8]) || !strings.Contains(got, "[REDACTED]") ||
		!strings.Contains(got, " more bytes left out]") {
		t.Errorf("%d bytes, ends %q", len(got), got[max(0, len(got)-120):])
	}
}

func TestMCPTextHelpers(t *testing.T) {
	if got := approvalLine(chat.ServerSetup{Approval: "never"}, nil); got != "" {
		t.Errorf("approval never: %q", got)
	}
	for n, want := range map[int]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KB", 3 << 20: "3.0 MB", 1536 << 10: "1.5 MB"} {
		if got := chat.ByteSize(n); got != want {
			t.Errorf("chat.ByteSize(%d) = %q, want %q", n, got, want)
		}
	}
	if got := chat.CapText("héllo", 2); got != "h… [5 more bytes left out]" {
		t.Errorf("capBytes cut inside a character: %q", got)
	}
	if got := chat.TailText([]string{"a", "b", "c"}, 4); got != "[1 earlier lines left out]\nb\nc" {
		t.Errorf("tailText %q", got)
	}
	if got := chat.TailText([]string{"abcdef"}, 3); got != "…def" {
		t.Errorf("tailText of one long line %q", got)
	}
	if got := joinNames([]string{"a", "b"}); got != "a and b" {
		t.Errorf("joinNames %q", got)
	}
}
