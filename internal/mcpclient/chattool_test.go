package mcpclient

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// Each tool of the catalogue is the chat's tool of its own type: a
// server's tool is Guarded by its server and queues on the server's lane
// (none when the server is parallel); the resource tools ask nothing and
// share a lane of their own; a call through the chat's tool answers what
// Session.Call does.
func TestSessionTool(t *testing.T) {
	docs, _ := fakeServer(t, "docs", fakemcp.ModeResources)
	free, _ := fakeServer(t, "free")
	free.ToolPrefix, free.Parallel = "f_", true
	h := newHarness(t, nil, docs, free)
	s := h.session("")
	tools, _ := h.client.Tools(t.Context())
	lanes := map[string]string{}
	for _, tl := range tools {
		ct := s.Tool(tl)
		if spec := ct.Spec(); spec.Name != tl.Name || spec.Description != tl.Description || string(spec.Schema) != string(ModelSchema(tl.InputSchema)) {
			t.Errorf("%s: spec %+v", tl.Name, spec)
		}
		g, guarded := ct.(chat.Guarded)
		switch {
		case tl.Group() == ResourcesGroup && guarded:
			t.Errorf("%s: a resource tool is Guarded", tl.Name)
		case tl.Group() != ResourcesGroup && !guarded:
			t.Errorf("%s: a server's tool is not Guarded", tl.Name)
		case guarded && (g.Guard().Server != tl.Server || g.Guard().Tool != tl.MCPName):
			t.Errorf("%s: guard %+v", tl.Name, g.Guard())
		}
		sq, ok := ct.(chat.Sequenced)
		if !ok {
			t.Fatalf("%s is not Sequenced", tl.Name)
		}
		lanes[tl.Name] = sq.Lane()
	}
	for name, want := range map[string]string{ListResourcesTool: "mcp:" + ResourcesGroup, ReadResourceTool: "mcp:" + ResourcesGroup,
		"echo": "mcp:docs", "f_echo": ""} {
		if got, ok := lanes[name]; !ok || got != want {
			t.Errorf("%s: lane %q (offered %v), want %q", name, got, ok, want)
		}
	}

	echo := h.tool("docs", fakemcp.ToolEcho)
	got, err := s.Tool(echo).Call(t.Context(), json.RawMessage(`{"text":"one"}`))
	if want := h.call(s, echo, `{"text":"one"}`); err != nil || got.IsError || got.Text() != want.Text() || want.Text() != "one" {
		t.Errorf("through the chat's tool: %+v (%v), want %q", got, err, want.Text())
	}
}

// A failed login tells the chat its reason alone (the server's name is
// the chat's to say), however it was wrapped.
func TestLoginErrorUserMessage(t *testing.T) {
	err := fmt.Errorf("finish: %w", &LoginError{Server: "remote", Reason: "the code expired"})
	if msg, ok := chat.UserMessage(err); !ok || msg != "the code expired" {
		t.Errorf("chat.UserMessage: %q %v", msg, ok)
	}
}
