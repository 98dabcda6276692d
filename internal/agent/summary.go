package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Summaries, not amnesia. When a conversation would pass the context
// budget, its oldest turns are summarised by the chat's model into one
// message at the head of every request; when the budget is reached again,
// the previous summary and the next old turns are summarised into a new
// one. A summary is made in a chunk — enough old turns to bring the request
// back to about half the budget — so that it happens rarely and the prefix
// of the requests (tools, system prompt, the summary, the turns after it)
// stays the same from one request to the next, as a provider's prompt cache
// needs. Only requests change: the history keeps every message, and the
// summary says how many of its first messages it stands for. A summary
// that cannot be made leaves the summary as it was; the request is then
// trimmed as before (FitBudget).

// Summary is the head of a long conversation: Text stands for the first
// Covers messages of the history. The zero Summary is none.
type Summary struct {
	Text   string `json:"text"`
	Covers int    `json:"covers"`
}

// summaryHead opens the message that carries a summary.
const summaryHead = "[Summary of the earlier part of this conversation, which was summarised to fit the context window. " +
	"The full text is not in this request.]\n\n"

// Message is the summary as the first message of a request; false when
// there is none.
func (s Summary) Message() (llm.Message, bool) {
	if s.Text == "" || s.Covers <= 0 {
		return llm.Message{}, false
	}
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: summaryHead + s.Text}}}, true
}

// SummaryTokens is the most a summary may be (its request's MaxTokens)
// under a context budget of limit tokens: a twentieth of it, between 256
// and 4,096 tokens.
func SummaryTokens(limit int) int { return min(max(limit/20, 256), 4096) }

// Compaction is what fitting one request to the budget sees: the whole
// history, its summary so far, where the current turn starts, and the
// budget.
type Compaction struct {
	History []llm.Message
	Summary Summary
	// Current is the index of the message that opened the current turn:
	// it and what follows are never summarised.
	Current int
	// Fixed is what the system prompt and the tools cost; Limit the
	// budget of the whole request.
	Fixed, Limit int
}

// covers is c.Summary.Covers, within what may be summarised.
func (c Compaction) covers() int { return min(max(c.Summary.Covers, 0), c.Current, len(c.History)) }

// Fit returns the messages to send: the summary's message, then the
// messages after it fitted by FitBudget (counting the summary as fixed).
// The history is not modified.
func (c Compaction) Fit() []llm.Message {
	from := c.covers()
	head, ok := Summary{Text: c.Summary.Text, Covers: from}.Message()
	if !ok {
		return FitBudget(c.History, c.Current, c.Fixed, c.Limit)
	}
	rest := FitBudget(c.History[from:], c.Current-from, c.Fixed+EstimateMessage(head), c.Limit)
	return append([]llm.Message{head}, rest...)
}

// tokens is what the request of Fit would cost before any trimming.
func (c Compaction) tokens() int {
	from := c.covers()
	n := c.Fixed
	if head, ok := (Summary{Text: c.Summary.Text, Covers: from}).Message(); ok {
		n += EstimateMessage(head)
	}
	for _, m := range c.History[from:] {
		n += EstimateMessage(m)
	}
	return n
}

// Chunk returns the end of the messages a new summary should cover:
// the old turns after the current summary, oldest first, until the
// request (with a summary of SummaryTokens) is at most half the budget, or
// until the messages to summarise would make a summary request over the
// budget themselves. It returns 0 when no summary is needed — the request
// fits — or none is possible: no whole turn lies between the summary and
// the current turn.
func (c Compaction) Chunk() int {
	from := c.covers()
	if c.tokens() <= c.Limit || from >= c.Current {
		return 0
	}
	// What the request costs without the messages from..end, once a
	// summary of the most a summary may be stands for them.
	rest := c.Fixed + SummaryTokens(c.Limit) + EstimateText(summaryHead) + 4
	for _, m := range c.History[from:] {
		rest += EstimateMessage(m)
	}
	room := c.room()
	end, chunk := from, 0
	for end < c.Current && rest > c.Limit/2 {
		next := end + 1
		for next < c.Current && !StartsTurn(c.History[next]) {
			next++
		}
		size := 0
		for _, m := range c.History[end:next] {
			rest -= EstimateMessage(m)
			size += EstimateText(renderMessage(m))
		}
		if end > from && chunk+size > room {
			break // the next turns go into the next summary
		}
		chunk += size
		end = next
	}
	if end == from {
		return 0
	}
	return end
}

// room is how many tokens of messages a summary request may hold: the
// budget less its instructions, the previous summary and the answer (at
// least a tenth of the budget).
func (c Compaction) room() int {
	return max(c.Limit-EstimateText(summarySystem)-EstimateText(c.Summary.Text)-2*SummaryTokens(c.Limit), c.Limit/10)
}

// summarySystem is the summary request's instructions.
const summarySystem = "You summarise the earlier part of a conversation between a user and an AI assistant " +
	"that uses tools, so that the assistant can go on with the conversation without its full text.\n\n" +
	"Write one concise summary that keeps:\n" +
	"- every fact the user stated and everything they asked to be remembered: names, numbers, codes, dates, " +
	"amounts, addresses, preferences;\n" +
	"- decisions taken and why, and open tasks or questions not answered yet;\n" +
	"- file paths, URLs and names of things the tools created or found.\n" +
	"Summarise tool output by what it established (what was found, read, changed or failed), never re-quote it. " +
	"When a previous summary is given, fold it into the new one: keep everything it holds that still matters. " +
	"Write in the third person (\"The user said…\"), as plain notes, and answer with the summary only."

// SummaryPrompt opens the user message of a summary request.
const SummaryPrompt = "Summarise the conversation below for the assistant to go on from."

// How much a summary request shows (the head) of a tool result's text —
// enough to tell what it established —, of a tool call's arguments and of
// a message's text (a pasted document).
const (
	maxRenderedResult = 8 << 10
	maxRenderedArgs   = 2 << 10
	maxRenderedText   = 32 << 10
)

// headOf is s within limit bytes, with a note of what was left out.
func headOf(s string, limit int) string {
	head, note := cutText(s, limit)
	if note == "" {
		return s
	}
	return head + fmt.Sprintf(" [… %d more bytes]", len(s)-len(head))
}

// Request is the summary request for the messages from the current
// summary up to end (Chunk): no tools, the instructions, the previous
// summary and the messages as a plain transcript.
func (c Compaction) Request(end int) llm.Request {
	var b strings.Builder
	b.WriteString(SummaryPrompt)
	if c.Summary.Text != "" {
		b.WriteString("\n\n<previous-summary>\n")
		b.WriteString(c.Summary.Text)
		b.WriteString("\n</previous-summary>")
	}
	var conv strings.Builder
	for _, m := range c.History[c.covers():end] {
		conv.WriteString(renderMessage(m))
	}
	// A turn bigger than the request may hold (Chunk takes one at
	// least) is cut to its head.
	text, note := cutText(conv.String(), c.room()*bytesPerToken)
	if note != "" {
		note = "\n[… the rest of this part of the conversation was too long to summarise]\n"
	}
	b.WriteString("\n\n<conversation>\n" + text + note + "</conversation>")
	return llm.Request{System: summarySystem, MaxTokens: SummaryTokens(c.Limit),
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: b.String()}}}}}
}

// renderMessage is m as lines of a plain transcript.
func renderMessage(m llm.Message) string {
	var b strings.Builder
	who := "User"
	if m.Role == llm.RoleAssistant {
		who = "Assistant"
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case llm.PartText:
			fmt.Fprintf(&b, "%s: %s\n", who, headOf(p.Text, maxRenderedText))
		case llm.PartImage:
			fmt.Fprintf(&b, "%s: [an image]\n", who)
		case llm.PartToolCall:
			fmt.Fprintf(&b, "Assistant called the tool %s with %s\n", p.ToolCall.Name, headOf(string(p.ToolCall.Arguments), maxRenderedArgs))
		case llm.PartToolResult:
			r := p.ToolResult
			status := "returned"
			if r.IsError {
				status = "failed"
			}
			fmt.Fprintf(&b, "The tool %s %s: ", r.Name, status)
			for _, c := range r.Content {
				if c.Kind == llm.PartImage {
					b.WriteString("[an image] ")
					continue
				}
				b.WriteString(headOf(c.Text, maxRenderedResult))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ErrEmptySummary is a summary request whose answer had no text: the
// summary is not changed.
var ErrEmptySummary = errors.New("the model answered the summary request without text")

// Summarise makes the summary the request of c needs, with complete (the
// chat's model, within the allowance). made is false when none is needed
// (Chunk is 0); err is why one that was needed could not be made — the
// summary is then c.Summary, and the request is trimmed (Fit).
func Summarise(ctx context.Context, c Compaction, complete func(context.Context, llm.Request) (llm.Response, error)) (s Summary, made bool, err error) {
	end := c.Chunk()
	if end == 0 {
		return c.Summary, false, nil
	}
	resp, err := complete(ctx, c.Request(end))
	if err != nil {
		return c.Summary, false, err
	}
	text := strings.TrimSpace(resp.Text)
	if text == "" {
		return c.Summary, false, ErrEmptySummary
	}
	if resp.StopReason == llm.StopMaxTokens {
		text += "\n[the summary was cut at its length limit]"
	}
	return Summary{Text: text, Covers: end}, true, nil
}
