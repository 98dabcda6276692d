package llmtest

import (
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Readers of a request the model was sent, for tests that check what the
// bot asked.

// LastUserText is the text of the last user message that is not tool
// results.
func LastUserText(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != llm.RoleUser {
			continue
		}
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if m.Parts[j].Kind == llm.PartText {
				return m.Parts[j].Text
			}
		}
	}
	return ""
}

// LastToolResults returns the tool results of the last message, if it
// holds any.
func LastToolResults(req llm.Request) []llm.ToolResult {
	if len(req.Messages) == 0 {
		return nil
	}
	var out []llm.ToolResult
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

// ResultText is the text of a tool result's text parts.
func ResultText(r llm.ToolResult) string {
	var b strings.Builder
	for _, p := range r.Content {
		if p.Kind == llm.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
