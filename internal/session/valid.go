package session

import (
	"encoding/json"
	"path/filepath"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A transcript is data from disk: a bug, a crash or a hand edit can leave
// lines that are JSON but not messages the agent can use — a tool call
// without its call, an image without its bytes, a part of an unknown
// kind, a role the providers do not know. Every message read back passes
// through repairMessage and repairHistory: what can be mended is (the
// fields a part's kind does not use are cleared, arguments that are not
// JSON become a JSON string), the rest is left out. validMessage is the
// promise the agent, the budget and the adapters rely on.

// validMessage reports whether m can go to the agent: a user or assistant
// message with at least one part, every part valid for the role.
func validMessage(m llm.Message) bool {
	if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant || len(m.Parts) == 0 {
		return false
	}
	for _, p := range m.Parts {
		if !validPart(m.Role, p) {
			return false
		}
	}
	return true
}

// validPart reports whether p is a part of a message of role: exactly the
// field of its kind set (text has none), tool calls only from the
// assistant, images and tool results only from the user, a tool result
// holding only text and images.
func validPart(role llm.Role, p llm.Part) bool {
	switch p.Kind {
	case llm.PartText:
		return p.Image == nil && p.ToolCall == nil && p.ToolResult == nil
	case llm.PartImage:
		return role == llm.RoleUser && p.Text == "" && p.ToolCall == nil && p.ToolResult == nil && validImage(p.Image)
	case llm.PartToolCall:
		c := p.ToolCall
		return role == llm.RoleAssistant && p.Text == "" && p.Image == nil && p.ToolResult == nil &&
			c != nil && c.ID != "" && c.Name != "" && json.Valid(c.Arguments)
	case llm.PartToolResult:
		r := p.ToolResult
		if role != llm.RoleUser || p.Text != "" || p.Image != nil || p.ToolCall != nil || r == nil || r.CallID == "" {
			return false
		}
		for _, c := range r.Content {
			if c.Kind != llm.PartText && c.Kind != llm.PartImage || !validPart(llm.RoleUser, c) {
				return false
			}
		}
		return true
	}
	return false
}

// validImage reports whether img has its bytes or names a stored file
// inside the state dir.
func validImage(img *llm.Image) bool {
	return img != nil && (len(img.Data) > 0 || filepath.IsLocal(img.Path))
}

// repairMessage returns m mended into a valid message, and false when
// nothing usable is left. changed reports whether anything was mended or
// left out.
func repairMessage(m llm.Message) (_ llm.Message, changed, ok bool) {
	if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
		return llm.Message{}, true, false
	}
	parts := make([]llm.Part, 0, len(m.Parts))
	for _, p := range m.Parts {
		fixed, mended, ok := repairPart(m.Role, p, true)
		changed = changed || mended || !ok
		if ok {
			parts = append(parts, fixed)
		}
	}
	if len(parts) == 0 {
		return llm.Message{}, true, false
	}
	return llm.Message{Role: m.Role, Parts: parts}, changed, true
}

// repairPart returns p with only its kind's field set, or false when that
// field is missing or unusable; changed reports whether p was mended.
// Tool results (when results is true) keep the text and image parts of
// their content that are valid.
func repairPart(role llm.Role, p llm.Part, results bool) (_ llm.Part, changed, ok bool) {
	switch p.Kind {
	case llm.PartText:
		return llm.Part{Kind: llm.PartText, Text: p.Text}, p.Image != nil || p.ToolCall != nil || p.ToolResult != nil, true
	case llm.PartImage:
		if role != llm.RoleUser || !validImage(p.Image) {
			return llm.Part{}, true, false
		}
		return llm.Part{Kind: llm.PartImage, Image: p.Image}, p.Text != "" || p.ToolCall != nil || p.ToolResult != nil, true
	case llm.PartToolCall:
		c := p.ToolCall
		if role != llm.RoleAssistant || c == nil || c.ID == "" || c.Name == "" {
			return llm.Part{}, true, false
		}
		changed = p.Text != "" || p.Image != nil || p.ToolResult != nil
		call := *c
		if !json.Valid(call.Arguments) {
			call.Arguments = storableArguments(c.Arguments) // never fails to be valid
			changed = true
		}
		return llm.Part{Kind: llm.PartToolCall, ToolCall: &call}, changed, true
	case llm.PartToolResult:
		r := p.ToolResult
		if !results || role != llm.RoleUser || r == nil || r.CallID == "" {
			return llm.Part{}, true, false
		}
		changed = p.Text != "" || p.Image != nil || p.ToolCall != nil
		res := *r
		res.Content = make([]llm.Part, 0, len(r.Content))
		for _, c := range r.Content {
			if c.Kind != llm.PartText && c.Kind != llm.PartImage {
				changed = true
				continue
			}
			fixed, mended, ok := repairPart(llm.RoleUser, c, false)
			changed = changed || mended || !ok
			if ok {
				res.Content = append(res.Content, fixed)
			}
		}
		return llm.Part{Kind: llm.PartToolResult, ToolResult: &res}, changed, true
	}
	return llm.Part{}, true, false
}

// repairHistory leaves out the tool results that answer no call of the
// message before them (the call's line was lost), and the messages left
// empty by that. It reports how many messages it changed or dropped.
func repairHistory(msgs []llm.Message) ([]llm.Message, int) {
	out := msgs[:0]
	n := 0
	for _, m := range msgs {
		if agent.HasToolResult(m) {
			var calls map[string]bool
			if len(out) > 0 && out[len(out)-1].Role == llm.RoleAssistant {
				calls = callIDs(out[len(out)-1])
			}
			kept := make([]llm.Part, 0, len(m.Parts))
			for _, p := range m.Parts {
				if p.ToolResult == nil || calls[p.ToolResult.CallID] {
					kept = append(kept, p)
				}
			}
			if len(kept) != len(m.Parts) {
				n++
				if len(kept) == 0 {
					continue
				}
				m = llm.Message{Role: m.Role, Parts: kept}
			}
		}
		out = append(out, m)
	}
	clear(msgs[len(out):])
	return out, n
}

// callIDs are the ids of m's tool calls.
func callIDs(m llm.Message) map[string]bool {
	ids := map[string]bool{}
	for _, p := range m.Parts {
		if p.ToolCall != nil {
			ids[p.ToolCall.ID] = true
		}
	}
	return ids
}
