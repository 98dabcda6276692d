package agent

import (
	"fmt"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// The context budget keeps every request under a token limit. Old tool
// results (page snapshots, screenshots) go first, because they are the bulk
// of a browsing conversation and the model has acted on them already; then
// whole old turns; then, within the current turn, tool results older than
// the latest step (a 40-step browsing turn would otherwise outgrow any
// window); last, the latest tool results themselves, which are sent whole
// whenever they fit: the largest texts are cut to their head, with a note
// asking the model for less, and then their images are left out. The system
// prompt, the tool list and the messages of the current turn are never
// dropped. Only the request is trimmed, never the history. Token counts
// are estimates (about four bytes a token, a flat cost per image): the
// point is a bound, not an exact fit.

const (
	bytesPerToken = 4
	imageTokens   = 1600 // a typical screenshot on either provider
	elidedNote    = "[earlier tool output elided to fit the context window]"
)

// EstimateText is the tokens text s costs, about.
func EstimateText(s string) int { return len(s)/bytesPerToken + 1 }

// answerTokens is what a model request that sets no cap on its answer
// (the chat's steps: the adapter's or the provider's default) reserves of
// the allowance for it, until its Usage says what it was.
const answerTokens = 4096

// AnswerTokens is what RequestTokens counts for the answer of a request
// capped at maxTokens (0: no cap of its own).
func AnswerTokens(maxTokens int) int64 {
	if maxTokens <= 0 {
		return answerTokens
	}
	return int64(maxTokens)
}

// RequestTokens estimates the most a request can cost, which it reserves
// of the allowance (Allowance.Reserve): its prompt, and an answer of
// maxTokens (0: answerTokens).
func RequestTokens(system string, tools []llm.Tool, msgs []llm.Message, maxTokens int) int64 {
	n := EstimateText(system) + EstimateTools(tools)
	for _, m := range msgs {
		n += EstimateMessage(m)
	}
	if maxTokens <= 0 {
		maxTokens = answerTokens
	}
	return int64(n + maxTokens)
}

func estimatePart(p llm.Part) int {
	switch p.Kind {
	case llm.PartText:
		return EstimateText(p.Text)
	case llm.PartImage:
		return imageTokens
	case llm.PartToolCall:
		return EstimateText(p.ToolCall.Name) + len(p.ToolCall.Arguments)/bytesPerToken + 4
	case llm.PartToolResult:
		n := 4
		for _, c := range p.ToolResult.Content {
			n += estimatePart(c)
		}
		return n
	}
	return 1
}

// EstimateMessage is the tokens message m costs, about.
func EstimateMessage(m llm.Message) int {
	n := 4
	for _, p := range m.Parts {
		n += estimatePart(p)
	}
	return n
}

// EstimateTools is the tokens the tool list costs, about.
func EstimateTools(tools []llm.Tool) int {
	n := 0
	for _, t := range tools {
		n += (len(t.Name)+len(t.Description)+len(t.Schema))/bytesPerToken + 8
	}
	return n
}

// FitBudget returns the messages to send so that fixed (system prompt and
// tools) plus the messages stay within limit. history is not modified.
// current is the index of the message that opened the current turn; it and
// everything after it are kept, their tool results elided or cut only when
// nothing older is left to drop. The request is over limit only when fixed,
// the current turn's own messages and calls, and the notes are.
func FitBudget(history []llm.Message, current, fixed, limit int) []llm.Message {
	total := fixed
	for _, m := range history {
		total += EstimateMessage(m)
	}
	if total <= limit {
		return history
	}
	out := make([]llm.Message, len(history))
	copy(out, history)

	// 1. Elide old tool results, oldest first.
	for i := 0; i < current && total > limit; i++ {
		m := out[i]
		if !HasToolResult(m) {
			continue
		}
		before := EstimateMessage(m)
		out[i] = elideToolResults(m)
		total -= before - EstimateMessage(out[i])
	}
	// 2. Drop whole old turns, oldest first. A turn starts with a user
	// message that is not made of tool results, so a tool call is never
	// separated from its result. The note saying so counts too.
	start := 0
	if total > limit && current > 0 {
		total += EstimateMessage(leftOutNote(len(history)))
	}
	for total > limit && start < current {
		end := start + 1
		for end < current && !StartsTurn(out[end]) {
			end++
		}
		for _, m := range out[start:end] {
			total -= EstimateMessage(m)
		}
		start = end
	}
	// 3. Elide the current turn's older tool results, oldest first; the
	// last message (the newest results) stays whole.
	for i := current; i < len(out)-1 && total > limit; i++ {
		if !HasToolResult(out[i]) {
			continue
		}
		before := EstimateMessage(out[i])
		out[i] = elideToolResults(out[i])
		total -= before - EstimateMessage(out[i])
	}
	// 4. Cut the newest tool results.
	if last := len(out) - 1; total > limit && last >= current && HasToolResult(out[last]) {
		out[last] = trimToolResults(out[last], EstimateMessage(out[last])-(total-limit))
	}
	out = out[start:]
	if start > 0 {
		note := leftOutNote(start)
		if len(out) > 0 && out[0].Role == llm.RoleUser {
			// Keep roles alternating: merge the note into the first message.
			merged := llm.Message{Role: llm.RoleUser, Parts: append(append([]llm.Part{}, note.Parts...), out[0].Parts...)}
			out = append([]llm.Message{merged}, out[1:]...)
		} else {
			out = append([]llm.Message{note}, out...)
		}
	}
	return out
}

// leftOutNote says that n earlier messages are not in the request.
func leftOutNote(n int) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText,
		Text: fmt.Sprintf("[%d earlier messages of this conversation were left out to fit the context window]", n)}}}
}

// HasToolResult reports whether m holds a tool result.
func HasToolResult(m llm.Message) bool {
	for _, p := range m.Parts {
		if p.Kind == llm.PartToolResult {
			return true
		}
	}
	return false
}

// StartsTurn reports whether m is a user's own message (not tool results).
func StartsTurn(m llm.Message) bool {
	return m.Role == llm.RoleUser && !HasToolResult(m)
}

// elideToolResults replaces the content of m's tool results with a short
// note, keeping ids and names so the call/result pairs stay valid.
func elideToolResults(m llm.Message) llm.Message {
	parts := make([]llm.Part, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = p
		if p.Kind != llm.PartToolResult {
			continue
		}
		r := *p.ToolResult
		if len(r.Content) == 1 && r.Content[0].Kind == llm.PartText && r.Content[0].Text == elidedNote {
			continue
		}
		size := 0
		for _, c := range r.Content {
			size += estimatePart(c)
		}
		if size < 64 {
			continue // small results are cheaper to keep than to explain
		}
		r.Content = []llm.Part{{Kind: llm.PartText, Text: elidedNote}}
		parts[i].ToolResult = &r
	}
	return llm.Message{Role: m.Role, Parts: parts}
}
