package mcpclient

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// entryConfig parses an entry as settings.json would.
func entryConfig(t *testing.T, name, entry string) mcpconfig.ServerConfig {
	t.Helper()
	cfg, err := mcpconfig.ParseEntry(name, []byte(entry), mcpconfig.SourceSettings, "test")
	if err != nil {
		t.Fatal(err)
	}
	cfg.StartupTimeout, cfg.CallTimeout, cfg.StderrLevel = 30*time.Second, 30*time.Second, slog.LevelWarn
	return cfg
}

// The real server-filesystem, given a folder of its own in its args, as
// its README configures it: every call of every chat sees that folder —
// after the server has settled what it serves (its stderr says it took
// the roots, or that the client declares none). Before, the bot declared
// the chat's workspace as a root and the server served it instead of the
// folder from its second call on.
func TestFilesystemServerKeepsItsArgsDirectory(t *testing.T) {
	bin := testkit.NPMBin(t, "mcp-server-filesystem")
	notes := t.TempDir()
	cfg := entryConfig(t, "filesystem", `{"command": "`+bin+`", "args": ["`+notes+`"]}`)
	h := newHarness(t, nil, cfg)
	ws := t.TempDir()
	s := h.session(ws)
	list := h.tool("filesystem", "list_allowed_directories")
	first := h.call(s, list, `{}`).Text()
	testkit.WaitFor(t, "server-filesystem settled its directories", 30*time.Second, func() bool {
		st, _ := s.Status("filesystem")
		tail := strings.Join(st.Tail, "\n")
		return strings.Contains(tail, "Updated allowed directories from MCP roots") ||
			strings.Contains(tail, "Client does not support MCP Roots")
	})
	second := h.call(s, list, `{}`).Text()
	for i, got := range []string{first, second} {
		if !strings.Contains(got, notes) || strings.Contains(got, ws) {
			t.Errorf("call %d: %q, want the args' folder %s (the workspace is %s)", i+1, got, notes, ws)
		}
	}
}

// The same with the fake, which asks for the roots as server-filesystem
// does: a command given a folder is declared no roots (it is told it
// cannot ask); one given none, or only the workspace, gets the chat's
// workspace.
func TestRootsDeclaredOnlyWithoutDirectoriesOfItsOwn(t *testing.T) {
	tests := []struct {
		name string
		args func(notes string) []string
		want string // the start of what the server's roots/list got
	}{
		{"a folder of its own", func(notes string) []string { return []string{notes} }, "error: "},
		{"a folder under the workspace", func(string) []string { return []string{"${workspace}/notes"} }, "error: "},
		{"none", func(string) []string { return nil }, "file://"},
		{"the workspace", func(string) []string { return []string{"${workspace}"} }, "file://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logPath := t.TempDir() + "/fs.log"
			l := fakemcp.Command(fakemcp.ModeRootsOnInit).WithLog(logPath).WithArgs(tt.args(t.TempDir())...)
			entry := map[string]any{"command": l.Command, "args": l.Args, "env": l.Env}
			cfg := entryConfig(t, "fs", mustJSON(t, entry))
			h := newHarness(t, nil, cfg)
			ws := t.TempDir()
			s := h.session(ws)
			s.Prewarm("fs")
			ev := fakemcp.WaitForEvents(t, logPath, fakemcp.EventRoots, 1, 10*time.Second)[0]
			if !strings.HasPrefix(ev.Reason, tt.want) {
				t.Errorf("args %q: the server got %q, want %q…", cfg.Args, ev.Reason, tt.want)
			}
			if tt.want == "file://" && !slices.Contains(strings.Split(ev.Reason, ","), "file://"+ws) {
				t.Errorf("roots %q, want the workspace %s", ev.Reason, ws)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
