package speech

import (
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// What of an answer is read aloud: its prose. Code blocks, tables, raw
// HTML, images and thematic breaks are left out, and of a link only its
// words are read (a bare URL not at all); lists are read item by item.
// An answer too long for one voice note is read in parts (Parts), never
// summarised: the text answer stays beside it, and a summary would be a
// second model call with its own cost and mistakes.

// Spoken is the prose of markdown, as plain text in paragraphs ("" when
// nothing in it is to be read aloud).
func Spoken(markdown string) string {
	src := []byte(markdown)
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var paras []string
	collectBlocks(doc, src, &paras)
	return strings.Join(paras, "\n\n")
}

// collectBlocks appends the spoken paragraphs of n's block children.
func collectBlocks(n ast.Node, src []byte, paras *[]string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c.Kind() {
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock, ast.KindThematicBreak, east.KindTable:
			continue
		case ast.KindParagraph, ast.KindHeading, ast.KindTextBlock:
			var b strings.Builder
			collectInline(c, src, &b)
			if s := strings.Join(strings.Fields(b.String()), " "); s != "" {
				*paras = append(*paras, s)
			}
		default: // lists, list items, block quotes: their blocks
			collectBlocks(c, src, paras)
		}
	}
}

// collectInline writes the words of n's inline children.
func collectInline(n ast.Node, src []byte, b *strings.Builder) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink, *ast.RawHTML, *ast.Image, *east.Strikethrough:
			continue
		default: // emphasis, code spans, links (their words), task boxes
			collectInline(c, src, b)
		}
	}
}

// Parts cuts text into pieces of at most limit characters, at paragraph
// ends where it can, else at sentence ends, else between words. At most
// maxParts are returned (0: no limit); when text is longer, the last one
// ends with a sentence that says the rest is in the written answer.
func Parts(text string, limit, maxParts int) []string {
	const restNote = " The rest is in the written answer."
	if limit <= len(restNote) {
		limit = len(restNote) + 1
	}
	var parts []string
	rest := strings.TrimSpace(text)
	for rest != "" {
		if len(parts) == maxParts-1 && len([]rune(rest)) > limit {
			head := cutAt(rest, limit-len(restNote))
			return append(parts, strings.TrimSpace(head)+restNote)
		}
		head := cutAt(rest, limit)
		parts = append(parts, strings.TrimSpace(head))
		rest = strings.TrimSpace(rest[len(head):])
	}
	return parts
}

// cutAt is the longest head of s of at most limit characters that ends at
// a paragraph's end, else a sentence's, else a word's (else anywhere).
func cutAt(s string, limit int) string {
	if len([]rune(s)) <= limit {
		return s
	}
	cut, n := len(s), 0
	for i := range s { // the byte index of character number limit
		if n == limit {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	for _, sep := range []string{"\n\n", ". ", "! ", "? ", "\n"} {
		if i := strings.LastIndex(head, sep); i > limit/3 {
			return head[:i+len(sep)]
		}
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
		return head[:i+1]
	}
	return head
}
