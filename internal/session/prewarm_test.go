package session

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestPrewarmServers(t *testing.T) {
	servers := []mcpconfig.ServerConfig{{Name: "playwright", PrewarmOnURL: true}, {Name: "github"}, {Name: "idle"}}
	tools := newToolset(entries([]mcpclient.Tool{
		{Server: "playwright", MCPName: "browser_navigate", Name: "browser_navigate"},
		{Server: "github", MCPName: "search", Name: "gh_search"},
		{Server: "idle", MCPName: "x", Name: "x"},
	}...), ToolPlan{}, nil)
	called := func(name string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
			ToolCall: &llm.ToolCall{ID: "1", Name: name, Arguments: json.RawMessage(`{}`)}}}}
	}
	text := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}
	}
	long := []llm.Message{called("gh_search")}
	for range prewarmLookback {
		long = append(long, text("chatter"))
	}
	cases := []struct {
		name    string
		history []llm.Message
		text    string
		want    []string
	}{
		{"nothing yet", nil, "hello", nil},
		{"a URL wakes the browser", nil, "what does https://go.dev say?", []string{"playwright"}},
		{"www. too", nil, "look at www.example.org please", []string{"playwright"}},
		{"recent use", []llm.Message{text("find it"), called("gh_search")}, "and the next one", []string{"github"}},
		{"both", []llm.Message{called("gh_search")}, "open http://127.0.0.1:8080/x", []string{"playwright", "github"}},
		{"use long ago", long, "again", nil},
		{"send and unknown tools are no server", []llm.Message{called("send"), called("gone")}, "hi", nil},
	}
	for _, c := range cases {
		if got := prewarmServers(c.history, c.text, tools, servers); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
