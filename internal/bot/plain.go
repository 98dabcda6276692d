package bot

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

// cutPlain splits plain text (command replies, /mcp output) into parts of
// at most limit UTF-16 units, at a line break when there is one in the
// second half of a part, else at a space, else anywhere between runes.
// Markdown answers go through Render instead.
func cutPlain(s string, limit int) []string {
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

// preChunks is text in <pre> blocks, each within Telegram's limit; Text is
// the plain fallback.
func preChunks(text string) []Chunk {
	var out []Chunk
	// Escaping does not change the visible length; leave room anyway.
	for _, p := range cutPlain(text, MaxMessageUTF16-64) {
		out = append(out, Chunk{HTML: "<pre>" + html.EscapeString(p) + "</pre>", Text: p})
	}
	return out
}
