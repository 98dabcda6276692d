package llmtest

import (
	"slices"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A fake model that summarises, as tests and benchmarks of long
// conversations need one. It tells a summary request only by what a real
// model sees — a request that offers no tools and whose instructions (the
// system prompt or the last user message) ask for a summary — and answers
// from what the request holds, nothing else.

// AsksForSummary reports whether r asks for a summary: it offers no tools,
// and its system prompt or its last user message asks to summarise. It
// reads a Model's request and a server's (either provider's JSON) alike.
func AsksForSummary(r Request) bool {
	if r.JSON != nil {
		if tools, _ := r.JSON["tools"].([]any); len(tools) > 0 {
			return false
		}
	} else if len(r.LLM.Tools) > 0 {
		return false
	}
	asks := strings.ToLower(systemText(r) + "\n" + lastUser(r))
	return strings.Contains(asks, "summarise") || strings.Contains(asks, "summarize") || strings.Contains(asks, "summary")
}

// PromptText is every text of r as the model reads it, in order: the
// system prompt, then each message's text, tool calls' arguments and tool
// results' text.
func PromptText(r Request) string {
	if r.JSON == nil {
		var b strings.Builder
		b.WriteString(r.LLM.System)
		for _, m := range r.LLM.Messages {
			for _, p := range m.Parts {
				b.WriteString("\n")
				switch {
				case p.ToolCall != nil:
					b.Write(p.ToolCall.Arguments)
				case p.ToolResult != nil:
					b.WriteString(ResultText(*p.ToolResult))
				default:
					b.WriteString(p.Text)
				}
			}
		}
		return b.String()
	}
	var texts []string
	collect(r.JSON["system"], &texts)
	collect(r.JSON["messages"], &texts)
	return strings.Join(texts, "\n")
}

// collect appends the texts of a decoded request body's value: strings
// under "text", "content", "arguments" and "input", nested anywhere.
func collect(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			collect(e, out)
		}
	case map[string]any:
		for _, k := range []string{"text", "content", "arguments", "function", "tool_calls", "input"} {
			if e, ok := v[k]; ok {
				collect(e, out)
			}
		}
	}
}

// systemText is r's system prompt (an OpenAI request's system messages).
func systemText(r Request) string {
	if r.JSON == nil {
		return r.LLM.System
	}
	var texts []string
	collect(r.JSON["system"], &texts)
	msgs, _ := r.JSON["messages"].([]any)
	for _, m := range msgs {
		if m, ok := m.(map[string]any); ok && (m["role"] == "system" || m["role"] == "developer") {
			collect(m["content"], &texts)
		}
	}
	return strings.Join(texts, "\n")
}

// lastUser is the text of r's last user message.
func lastUser(r Request) string {
	if r.JSON == nil {
		return LastUserText(r.LLM)
	}
	msgs, _ := r.JSON["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, ok := msgs[i].(map[string]any); ok && m["role"] == "user" {
			var texts []string
			collect(m["content"], &texts)
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// Summariser answers a summary request as a model that keeps the
// sentences keep says to keep (every one stating a fact, say) of the text
// it was sent — the previous summary and the conversation — once each, in
// order, one a line. It sees nothing but the request.
func Summariser(keep func(sentence string) bool) func(Request) Reply {
	return func(r Request) Reply {
		var kept []string
		for _, s := range Sentences(lastUser(r)) {
			if keep(s) && !slices.Contains(kept, s) {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			kept = []string{"Nothing to keep."}
		}
		return Text(strings.Join(kept, "\n"))
	}
}

// Sentences splits text into its sentences: at line ends and after ". ",
// each trimmed, with the speaker a transcript line opens with ("User: ")
// left out.
func Sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, who := range []string{"User: ", "Assistant: "} {
			line = strings.TrimPrefix(line, who)
		}
		for s := range strings.SplitSeq(line, ". ") {
			if s = strings.TrimSpace(s); s != "" {
				if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
					s += "."
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// IsSummaryHead reports whether m reads as a summary of earlier
// conversation at the head of a request (for tests that look for one).
func IsSummaryHead(m llm.Message) bool {
	return m.Role == llm.RoleUser && len(m.Parts) > 0 && m.Parts[0].Kind == llm.PartText &&
		strings.HasPrefix(m.Parts[0].Text, "[Summary of the earlier part of this conversation")
}
