package session

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Hard caps on what a session writes into the transcript and sends to the
// model and the chat. The MCP client caps its own results, but an error
// text, a model's answer or a tool call can be any size, and a transcript
// line the reader cannot take would be lost at the next load: so the
// session cuts every text itself, after redaction (a secret cut in half is
// no longer recognised), with a note that says so.
const (
	// maxPartText bounds one text: a tool result's, an error's, the
	// model's answer, the user's message.
	maxPartText = 256 << 10
	// maxMessageText bounds the texts of one message together (forty
	// parallel results share it).
	maxMessageText = 16 << 20
	// maxArguments bounds a tool call's arguments: a call with more is
	// not made.
	maxArguments = maxPartText
	// maxName bounds a tool call's id and name (providers allow 64
	// characters).
	maxName = 1 << 10
	// maxTranscriptLine is the longest line the transcript reader
	// decodes; longer ones are skipped. What the caps above let through
	// stays well below it.
	maxTranscriptLine = 64 << 20
)

// capText returns s cut to its head within limit bytes (at a line end or
// a character boundary) with a note giving the sizes, or s when it fits.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("\n[%s of this %s text were cut: the bot keeps at most %s of one text. "+
		"Ask for less at a time, or write big output to a file in the workspace.]",
		chat.ByteSize(len(s)-limit), chat.ByteSize(len(s)), chat.ByteSize(limit))
	head := s[:max(limit-len(note), 0)]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 && i+1 >= len(head)*3/4 {
		head = head[:i+1]
	} else {
		for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
			head = head[:len(head)-1]
		}
	}
	return strings.TrimSuffix(head, "\n") + note
}

// capName cuts a tool call's id or name, without a note: the call then
// names no tool, and its result says so.
func capName(s string) string {
	if len(s) <= maxName {
		return s
	}
	head := s[:maxName]
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	return head
}

// capToolResults cuts the texts of rs, which go into one message: each to
// maxPartText, and all of them to maxMessageText together (an equal share
// each when there are many).
func capToolResults(rs []llm.ToolResult) {
	texts := 0
	for _, r := range rs {
		for _, c := range r.Content {
			if c.Kind == llm.PartText {
				texts++
			}
		}
	}
	limit := maxPartText
	if texts > 0 {
		limit = min(limit, max(maxMessageText/texts, 1024))
	}
	for i := range rs {
		for j := range rs[i].Content {
			if c := &rs[i].Content[j]; c.Kind == llm.PartText {
				c.Text = capText(c.Text, limit)
			}
		}
	}
}
