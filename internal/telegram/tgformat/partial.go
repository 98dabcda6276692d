package tgformat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// RenderPartial renders the beginning of an answer that is still being written, for the message that shows it
// while it streams. Render already yields valid Telegram HTML for any input — an unclosed "**" or "```" is text
// or a code block that runs to the end, never a broken tag — so what RenderPartial adds is that the unfinished
// end reads as it will once finished, instead of flickering from raw markers to formatting:
//
//   - an open fenced code block is closed (a half-typed fence line of one or two backticks is left out);
//   - in the last paragraph, open inline code, bold, italic and strikethrough are closed, innermost first;
//   - a marker with nothing after it yet ("**", "`", "~~" at the very end) is left out;
//   - a link whose target is still being written ("[text](https://exa") shows as its text alone.
//
// The chunks are cut as Render cuts them; the caller shows the first while streaming.
func RenderPartial(markdown string) []Chunk {
	return Render(CompletePartial(markdown))
}

// CompletePartial is the Markdown RenderPartial renders: markdown with the constructs its unfinished end leaves
// open closed (see RenderPartial).
func CompletePartial(markdown string) string {
	body, fence := openFence(markdown)
	if fence != "" {
		// Inside a code block nothing else is open: close it.
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		return body + fence
	}
	// The last paragraph: what follows the last blank line.
	start := strings.LastIndex(body, "\n\n") + 1
	return body[:start] + completeInline(body[start:])
}

// openFence reports the fence that closes a code block left open at the end of s ("" when none is), and s
// without a trailing line that is only the start of a fence (one or two backticks).
func openFence(s string) (string, string) {
	var (
		open     byte // the fence character of the open block, or 0
		openLen  int
		lineFrom int
	)
	for lineFrom <= len(s) {
		end := strings.IndexByte(s[lineFrom:], '\n')
		last := end < 0
		if last {
			end = len(s)
		} else {
			end += lineFrom
		}
		line := s[lineFrom:end]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if indent <= 3 && trimmed != "" && (trimmed[0] == '`' || trimmed[0] == '~') {
			c := trimmed[0]
			n := len(trimmed) - len(strings.TrimLeft(trimmed, string(c)))
			rest := trimmed[n:]
			switch {
			case open == 0 && n >= 3 && !(c == '`' && strings.ContainsRune(rest, '`')):
				open, openLen = c, n
			case open != 0 && c == open && n >= openLen && strings.TrimSpace(rest) == "":
				open = 0
			case open == 0 && last && n < 3 && strings.TrimSpace(rest) == "" && c == '`':
				// A fence being typed: leave it out until it is one.
				return s[:lineFrom], ""
			}
		}
		if last {
			break
		}
		lineFrom = end + 1
	}
	if open == 0 {
		return s, ""
	}
	return s, strings.Repeat(string(open), openLen)
}

// completeInline closes what the paragraph p leaves open at its end.
func completeInline(p string) string {
	s := inlineScan{p: p, linkText: -1}
	if at, dangling := s.scan(); dangling {
		// A marker with nothing after it yet.
		return completeInline(p[:at])
	}
	return s.complete()
}

// opener is an emphasis marker left open, at byte offset at of the
// paragraph.
type opener struct {
	marker string
	at     int
}

// inlineScan is what is open at a point of the paragraph p.
type inlineScan struct {
	p        string
	stack    []opener // open emphasis, innermost last
	code     int      // the length of the open code span's backtick run, 0: none
	codeAt   int
	linkText int // offset of the '[' of a link whose target is open, -1: none
	inTarget bool
}

// top is the innermost open emphasis marker, or "".
func (s *inlineScan) top() string {
	if len(s.stack) == 0 {
		return ""
	}
	return s.stack[len(s.stack)-1].marker
}

// scan walks the paragraph, keeping what is open. It stops at an emphasis
// marker with nothing after it yet, at the very end, and returns its
// offset and true.
func (s *inlineScan) scan() (int, bool) {
	p := s.p
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case s.inTarget:
			if c == ')' {
				s.inTarget, s.linkText = false, -1
			}
			i++
		case c == '\\' && s.code == 0:
			i += 2
		case c == '`':
			i += s.backticks(i)
		case s.code > 0:
			i++
		case c == ']' && i+1 < len(p) && p[i+1] == '(':
			if j := strings.LastIndexByte(p[:i], '['); j >= 0 {
				s.linkText, s.inTarget = j, true
			}
			i += 2
		case c == '*' || c == '_' || c == '~':
			n, dangling := s.emphasis(i)
			if dangling {
				return i, true
			}
			i += n
		default:
			i++
		}
	}
	return 0, false
}

// backticks opens or closes a code span with the backtick run at i, and
// returns the run's length.
func (s *inlineScan) backticks(i int) int {
	n := runLen(s.p, i, '`')
	switch {
	case s.code == 0:
		s.code, s.codeAt = n, i
	case n == s.code:
		s.code = 0
	}
	return n
}

// emphasis opens or closes emphasis with the run of '*', '_' or '~' at i,
// and returns the run's length; dangling is true when the run ends the
// paragraph without closing anything.
func (s *inlineScan) emphasis(i int) (n int, dangling bool) {
	p, c := s.p, s.p[i]
	n = runLen(p, i, c)
	if c == '~' && n != 2 {
		return n, false
	}
	marker := p[i : i+min(n, 2)]
	if n >= 3 && c != '~' {
		marker = p[i : i+3]
	}
	prev, _ := utf8.DecodeLastRuneInString(p[:i])
	next, _ := utf8.DecodeRuneInString(p[i+n:])
	if c == '_' && isAlnum(prev) && isAlnum(next) {
		return n, false // intraword underscore: no emphasis
	}
	switch {
	case s.top() == marker:
		s.stack = s.stack[:len(s.stack)-1]
	case len(marker) == 3 && s.top() == marker[:1]+marker[:1]:
		s.stack = s.stack[:len(s.stack)-1] // "***" closing "**" then opening or closing "*"
		if s.top() == marker[:1] {
			s.stack = s.stack[:len(s.stack)-1]
		}
	case i+n < len(p) && !unicode.IsSpace(next):
		if len(marker) == 3 {
			s.stack = append(s.stack, opener{marker[:1], i}, opener{marker[:2], i + 1})
		} else {
			s.stack = append(s.stack, opener{marker, i})
		}
	case i+n == len(p):
		return n, true
	}
	return n, false
}

// complete returns the scanned paragraph with what it left open closed:
// a link whose target is open becomes its text, an open code span is
// closed, then the open emphasis, innermost first.
func (s *inlineScan) complete() string {
	p := s.p
	switch {
	case s.inTarget:
		// "[text](partial target": the text alone, and what was open
		// before the link.
		return completeInline(p[:s.linkText] + p[s.linkText+1:strings.LastIndex(p, "](")])
	case s.code > 0:
		if s.codeAt+s.code == len(p) {
			return completeInline(p[:s.codeAt]) // "`" with nothing after it
		}
		return p + strings.Repeat("`", s.code)
	}
	var sb strings.Builder
	sb.WriteString(strings.TrimRight(p, " \t"))
	for k := len(s.stack) - 1; k >= 0; k-- {
		o := s.stack[k]
		if strings.TrimSpace(p[o.at+len(o.marker):]) == "" {
			// Opened with nothing after it: drop the marker instead.
			return completeInline(p[:o.at] + p[o.at+len(o.marker):])
		}
		sb.WriteString(o.marker)
	}
	return sb.String()
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
