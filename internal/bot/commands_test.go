package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		setup func(*fakeSessions)
		calls []string
		reply string // "" for none; a prefix of the (only) reply otherwise
	}{
		{"new", "/new", nil, []string{"reset 1001"}, "New conversation started."},
		{"new fails", "/new", func(s *fakeSessions) { s.resetErr = errors.New("disk full") }, []string{"reset 1001"}, "Sorry, I could not start a new conversation."},
		{"stop idle", "/stop", nil, []string{"stop 1001"}, "Nothing is running."},
		{"stop running", "/stop", func(s *fakeSessions) { s.running = true }, []string{"stop 1001"}, ""},
		{"mcp", "/mcp", nil, []string{"mcp 1001"}, "MCP servers:\n• fetch: disabled"},
		{"mcp name", "/mcp fetch", nil, []string{"mcp 1001 fetch"}, "<pre>fetch: disabled\ncommand: cmd\nsource: test</pre>"},
		{"mcp unknown name", "/mcp nope", func(s *fakeSessions) {
			s.mcpServer = func(context.Context, chat.Place, string) (chat.ServerStatus, error) {
				return chat.ServerStatus{}, fmt.Errorf("mcp: %w", &chat.UnknownServerError{Name: "nope", Configured: []string{"fetch", "my server"}})
			}
		}, []string{"mcp 1001 nope"}, `Sorry: no MCP server named "nope" (configured: fetch, my server)`},
		{"mcp restart unknown name, none configured", "/mcp restart nope", func(s *fakeSessions) {
			s.restartErr = &chat.UnknownServerError{Name: "nope"}
		}, []string{"restart 1001 nope"}, `Sorry: no MCP server named "nope" (none are configured)`},
		{"mcp restart", "/mcp restart fetch", nil, []string{"restart 1001 fetch"}, "fetch restarted: the next call starts a fresh process."},
		{"mcp restart no name", "/mcp restart", nil, nil, "Usage: /mcp restart <name>"},
		// A server's name as another client wrote it: a marketplace name, or
		// one with spaces (the words are its name).
		{"mcp a marketplace name", "/mcp github.com/upstash/context7-mcp", nil, []string{"mcp 1001 github.com/upstash/context7-mcp"}, "<pre>github.com/upstash/context7-mcp: disabled\ncommand: cmd"},
		{"mcp a name with spaces", "/mcp my  server", nil, []string{"mcp 1001 my server"}, "<pre>my server: disabled\ncommand: cmd"},
		{"mcp restart a name with spaces", "/mcp restart my server", nil, []string{"restart 1001 my server"}, "my server restarted"},
		{"unknown", "/weather", nil, nil, "Unknown command /weather. Send /help"},
		{"to us", "/new@volcanic_test_bot", nil, []string{"reset 1001"}, "New conversation started."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startBot(t, nil)
			if tt.setup != nil {
				tt.setup(h.sess)
			}
			h.fake.Message(alice, alice, tt.text)
			h.fake.Message(alice, alice, "sync") // handled after the command
			h.sess.waitCalls(t, "deliver", 1)
			if got := h.sess.Calls(); !slices.Equal(got[:len(got)-1], tt.calls) {
				t.Errorf("calls %q, want %q", got[:len(got)-1], tt.calls)
			}
			sent := h.fake.Sent(alice)
			switch {
			case tt.reply == "" && len(sent) != 0:
				t.Errorf("sent %+v, want nothing", sent)
			case tt.reply != "" && (len(sent) != 1 || !strings.HasPrefix(sent[0].Text, tt.reply)):
				t.Errorf("sent %+v, want one reply starting %q", sent, tt.reply)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	h := startBot(t, nil)
	h.fake.Message(alice, alice, "/start")
	h.fake.Message(group, alice, "/help@"+h.fake.Me().Username)
	private := h.texts(t, alice, 1)[0]
	for _, want := range []string{"playwright, fetch", "/new", "/stop", "/usage", "/model <name>", "/approvals", "/memory", "/memory clear", "/voice on|off", "/jobs", "/jobs cancel <id>", "/tz <Area/City>", "/mcp restart <name>", "/help"} {
		if !strings.Contains(private, want) {
			t.Errorf("help lacks %q:\n%s", want, private)
		}
	}
	if strings.Contains(private, "mention me") {
		t.Errorf("private help talks about groups:\n%s", private)
	}
	if g := h.texts(t, group, 1)[0]; !strings.Contains(g, "mention me (@volcanic_test_bot)") {
		t.Errorf("group help:\n%s", g)
	}
	if cmds := h.fake.Commands(); len(cmds) != 12 || !slices.ContainsFunc(cmds, func(c models.BotCommand) bool { return c.Command == "model" }) ||
		!slices.ContainsFunc(cmds, func(c models.BotCommand) bool { return c.Command == "memory" }) {
		t.Errorf("setMyCommands %+v", cmds)
	}
}

func TestMCPTextIsRedactedAndEscaped(t *testing.T) {
	h := startBot(t, func(o *testOptions) { o.Redactor = replacer{strings.NewReplacer("hunter2", "[redacted]")} })
	h.sess.mcpStatus = func(context.Context, chat.Place) (chat.MCPStatus, error) {
		return chat.MCPStatus{Servers: []chat.ServerStatus{{Display: "fetch", Enabled: true, DiscoveryError: "password hunter2"}}}, nil
	}
	h.sess.mcpServer = func(context.Context, chat.Place, string) (chat.ServerStatus, error) {
		return chat.ServerStatus{Display: "fetch", Enabled: true, State: chat.ServerRunning,
			ServerDetails: chat.ServerDetails{Setup: chat.ServerSetup{Command: "run <it> & well", Env: []string{"KEY"}, Source: "hunter2", Approval: "never"}}}, nil
	}
	h.fake.Message(alice, alice, "/mcp")
	h.fake.Message(alice, alice, "/mcp fetch")
	got := h.texts(t, alice, 2)
	if got[0] != "MCP servers:\n• fetch: failed: password [redacted]" {
		t.Errorf("/mcp sent %q", got[0])
	}
	if got[1] != "<pre>fetch: running, 0 tools\ncommand: run &lt;it&gt; &amp; well\nenv: KEY\nsource: [redacted]</pre>" {
		t.Errorf("/mcp fetch sent %q", got[1])
	}
}
