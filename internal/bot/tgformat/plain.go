package tgformat

import (
	"html"
	"strings"
	"unicode/utf8"
)

// u16 is the length of s in UTF-16 code units, as Telegram counts.
func u16(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// CutPlain splits plain text (command replies, /mcp output) into parts of at most limit UTF-16 code units, for
// messages sent without markup: at a line break when there is one in the second half of a part, else at a space,
// else anywhere between characters. The line breaks and spaces at a cut are dropped. Markdown goes through
// [Render] instead.
func CutPlain(s string, limit int) []string {
	var parts []string
	for s != "" {
		if u16(s) <= limit {
			parts = append(parts, s)
			break
		}
		// The longest prefix within limit.
		n, end := 0, 0
		for i, r := range s {
			w := 1
			if r >= 0x10000 {
				w = 2
			}
			if n+w > limit {
				break
			}
			n += w
			end = i + utf8.RuneLen(r)
		}
		cut := end
		if i := strings.LastIndexByte(s[:end], '\n'); i > end/2 {
			cut = i + 1
		} else if i := strings.LastIndexByte(s[:end], ' '); i > end/2 {
			cut = i + 1
		}
		if part := strings.TrimRight(s[:cut], "\n "); part != "" {
			parts = append(parts, part)
		}
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
