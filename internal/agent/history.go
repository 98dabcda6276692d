// Package agent holds the pure steps of the agent loop: what a request is
// made of, given the conversation. It knows the model's messages (llm) and
// nothing of chats, Telegram or MCP.
package agent

import "github.com/volcanicbot/volcanicbot/internal/llm"

// MergeAdjacent joins consecutive messages of the same role (a turn that
// was stopped before the model answered leaves two user messages in a
// row), which some providers refuse.
func MergeAdjacent(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			merged := llm.Message{Role: m.Role, Parts: append(append([]llm.Part{}, out[n-1].Parts...), m.Parts...)}
			out[n-1] = merged
			continue
		}
		out = append(out, m)
	}
	return out
}

// RepairToolCalls gives every tool call without a result (the bot was
// killed while a tool ran) an error result, so the provider accepts the
// history. msgs is not modified.
func RepairToolCalls(msgs []llm.Message) []llm.Message {
	missing := func(i int) []llm.Part {
		if msgs[i].Role != llm.RoleAssistant {
			return nil
		}
		answered := map[string]bool{}
		if i+1 < len(msgs) {
			for _, p := range msgs[i+1].Parts {
				if p.ToolResult != nil {
					answered[p.ToolResult.CallID] = true
				}
			}
		}
		var parts []llm.Part
		for _, p := range msgs[i].Parts {
			if p.ToolCall != nil && !answered[p.ToolCall.ID] {
				parts = append(parts, llm.Part{Kind: llm.PartToolResult, ToolResult: &llm.ToolResult{
					CallID: p.ToolCall.ID, Name: p.ToolCall.Name, IsError: true,
					Content: []llm.Part{{Kind: llm.PartText, Text: "interrupted: the bot stopped before this call finished"}},
				}})
			}
		}
		return parts
	}
	broken := false
	for i := range msgs {
		if len(missing(i)) > 0 {
			broken = true
			break
		}
	}
	if !broken {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs)+1)
	var pending []llm.Part
	for i, m := range msgs {
		if len(pending) > 0 {
			if m.Role == llm.RoleUser {
				m = llm.Message{Role: llm.RoleUser, Parts: append(pending, m.Parts...)}
			} else {
				out = append(out, llm.Message{Role: llm.RoleUser, Parts: pending})
			}
			pending = nil
		}
		out = append(out, m)
		pending = missing(i)
	}
	if len(pending) > 0 {
		out = append(out, llm.Message{Role: llm.RoleUser, Parts: pending})
	}
	return out
}
