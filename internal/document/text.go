package document

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// errFull stops a parser once the text is at its cap; Extract takes it
// for success with Result.Truncated.
var errFull = errors.New("text cap reached")

// maxLine is the longest line written: a longer one is wrapped at a space
// (or cut at maxLine+wrapSlack), so that the read tool's line ranges work
// on text that came as one line a page.
const (
	maxLine   = 2000
	wrapSlack = 200
)

// textWriter collects a document's text up to a cap: valid UTF-8,
// control characters as spaces, no carriage returns, at most one blank
// line in a row, long lines wrapped.
type textWriter struct {
	b       strings.Builder
	max     int
	full    bool
	carry   []byte // an incomplete rune from the last Write
	line    int    // bytes in the current line
	newline int    // newlines just written (0, 1 or 2)
}

func newTextWriter(max int) *textWriter { return &textWriter{max: max, newline: 2} }

// Write adds p; once the cap is reached it is errFull.
func (w *textWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.carry) > 0 {
		p = append(w.carry, p...)
		w.carry = nil
	}
	for len(p) > 0 {
		if w.full {
			return n, errFull
		}
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p) {
			w.carry = append([]byte(nil), p...)
			return n, nil
		}
		p = p[size:]
		w.rune(r)
	}
	if w.full {
		return n, errFull
	}
	return n, nil
}

// WriteString is Write for a string.
func (w *textWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Break ends the current line, keeping at most one blank line.
func (w *textWriter) Break() { w.rune('\n') }

// Blank ends the paragraph: a blank line after the text, if any.
func (w *textWriter) Blank() {
	w.rune('\n')
	w.rune('\n')
}

func (w *textWriter) rune(r rune) {
	switch {
	case r == '\r':
		return
	case r == '\n':
		if w.newline >= 2 {
			return
		}
		w.newline++
		w.put("\n")
		w.line = 0
		return
	case r == '\t':
	case r < ' ' || r == 0x7f || r == utf8.RuneError || r == '\ufeff':
		r = ' '
	}
	if r == ' ' && (w.line == 0 || w.line >= maxLine) {
		if w.line >= maxLine {
			w.newline = 0
			w.rune('\n')
		}
		return // no space at the start of a line
	}
	if w.line >= maxLine+wrapSlack {
		w.newline = 0
		w.rune('\n')
	}
	w.newline = 0
	w.put(string(r))
	w.line += utf8.RuneLen(r)
}

func (w *textWriter) put(s string) {
	if w.full {
		return
	}
	if w.b.Len()+len(s) > w.max {
		w.full = true
		return
	}
	w.b.WriteString(s)
}

// String is the text written, without trailing blank lines.
func (w *textWriter) String() string { return strings.TrimRight(w.b.String(), " \n") }
