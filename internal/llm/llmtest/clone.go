package llmtest

import (
	"slices"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// CloneHistory copies msgs deeply enough to tell, by reflect.DeepEqual,
// whether a step changed anything in them: the parts and what they point
// to (images, tool calls, tool results and their content).
func CloneHistory(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Parts: cloneParts(m.Parts)}
	}
	return out
}

func cloneParts(parts []llm.Part) []llm.Part {
	out := slices.Clone(parts)
	for i, p := range out {
		if p.Image != nil {
			img := *p.Image
			out[i].Image = &img
		}
		if p.ToolCall != nil {
			c := *p.ToolCall
			out[i].ToolCall = &c
		}
		if p.ToolResult != nil {
			r := *p.ToolResult
			r.Content = cloneParts(r.Content)
			out[i].ToolResult = &r
		}
	}
	return out
}
