package tgformat

import (
	"html"
	"strings"
)

// CutPlain splits plain text (command replies, /mcp output) into parts of at most limit UTF-16 code units, for
// messages sent without markup: at a line break when there is one in the second half of a part, else at a space,
// else anywhere between characters. The line breaks and spaces at a cut are dropped, and so is a part with
// nothing visible (Telegram refuses a blank message). A limit below 2 is taken as 2, room for any character.
// Markdown goes through [Render] instead.
func CutPlain(s string, limit int) []string {
	limit = max(limit, 2)
	var parts []string
	keep := func(part string) {
		if strings.TrimSpace(part) != "" {
			parts = append(parts, part)
		}
	}
	for s != "" {
		// The longest prefix of whole characters within limit: at least one, as none takes more than 2 units.
		// Only that prefix is scanned, so a long text costs linear time, not a recount of the rest per part.
		n, end := 0, 0
		for end < len(s) {
			w := byteUnits(s[end])
			if n+w > limit {
				break
			}
			n += w
			end++
			for end < len(s) && isContinuation(s[end]) {
				end++
			}
		}
		if end == len(s) {
			keep(s)
			break
		}
		cut := end
		if i := strings.LastIndexByte(s[:end], '\n'); i > end/2 {
			cut = i + 1
		} else if i := strings.LastIndexByte(s[:end], ' '); i > end/2 {
			cut = i + 1
		}
		keep(strings.TrimRight(s[:cut], "\n "))
		s = strings.TrimLeft(s[cut:], "\n")
	}
	return parts
}

// PreChunks puts text in <pre> blocks, one message each, within Telegram's limit; a chunk's Text is the same
// text without markup, the fallback when Telegram refuses the HTML.
func PreChunks(text string) []Chunk {
	var out []Chunk
	// Escaping does not change the visible length; leave room anyway.
	for _, p := range CutPlain(text, MaxMessageUTF16-64) {
		out = append(out, Chunk{HTML: "<pre>" + html.EscapeString(p) + "</pre>", Text: p})
	}
	return out
}
