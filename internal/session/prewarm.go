package session

import (
	"regexp"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// prewarmLookback is how many of the newest transcript messages tell which
// servers the chat uses: a few turns.
const prewarmLookback = 24

// urlPattern finds a web address in a message.
var urlPattern = regexp.MustCompile(`(?i)\bhttps?://\S|\bwww\.[a-z0-9-]+\.[a-z]`)

// prewarmServers are the servers whose process a turn should start while
// the model takes its first step: those the chat's recent turns called,
// and, when the message holds a URL, those that ask for it (the browser).
func prewarmServers(history []llm.Message, text string, tools *toolset, servers []mcpconfig.ServerConfig) []string {
	want := map[string]bool{}
	from := max(0, len(history)-prewarmLookback)
	for _, m := range history[from:] {
		for _, p := range m.Parts {
			if p.Kind != llm.PartToolCall || p.ToolCall == nil {
				continue
			}
			if t, ok := tools.mcp[p.ToolCall.Name]; ok {
				want[t.Server] = true
			}
		}
	}
	url := urlPattern.MatchString(text)
	var out []string
	for _, s := range servers {
		if (want[s.Name] || (url && s.PrewarmOnURL)) && tools.active[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}
