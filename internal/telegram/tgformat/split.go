package tgformat

import (
	"bytes"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Splitting works on the rendered document's visible text, never on HTML, so a split can fall inside no tag and
// no entity; each chunk's HTML is serialized on its own, closing at its end every element it opened and
// reopening at its start every element that continues from the previous chunk (a code block split in two
// becomes two <pre> blocks with the same language).
//
// A split point is a candidate: a gap of visible text dropped at the split (a block separator, a line break, a
// space) or, where a stretch longer than a message offers none, any character boundary. Each candidate has a
// penalty; the splitter picks the candidates that give the fewest messages and, among those, the lowest total
// penalty (a shortest-path over the candidates with a sliding-window minimum, linear in their number). So it
// prefers splitting between blocks, then at line breaks, then at spaces, and breaks a code block or a link only
// when every split that avoids it would need one more message.

// splitPoint is a split candidate: the bytes vis[s:e] are dropped when splitting there, and us, ue are the same
// offsets in UTF-16 units.
type splitPoint struct {
	s, e   int
	us, ue int
	pen    int
}

// split cuts d into chunks of at most limit UTF-16 units of visible text.
func (d *renderedDoc) split(limit int) []Chunk {
	limit = max(limit, 2) // room for one surrogate pair
	if UTF16Len(d.vis) <= limit {
		return d.appendChunk(nil, 0, len(d.vis))
	}
	cs := d.candidates(limit)
	var out []Chunk
	start := 0
	for _, j := range chooseSplits(cs, limit) {
		out = d.appendChunk(out, start, cs[j].s)
		start = cs[j].e
	}
	return out
}

// candidates lists the natural split points of d in order, the end of the document last, then fills every
// stretch longer than limit with forced ones.
func (d *renderedDoc) candidates(limit int) []splitPoint {
	cs := make([]splitPoint, 1, len(d.vis)/6+2)
	u := 0
	for _, r := range d.runs {
		switch r.kind {
		case runSep:
			n := UTF16Len(d.vis[r.start:r.end])
			cs = append(cs, splitPoint{s: r.start, e: r.end, us: u, ue: u + n, pen: int(r.pen)})
			u += n
		case runText, runCode:
			nl := penLine
			if r.kind == runCode {
				nl = penCode
			}
			for i := r.start; i < r.end; i++ {
				c := d.vis[i]
				switch {
				case c == '\n':
					cs = append(cs, splitPoint{s: i, e: i + 1, us: u, ue: u + 1, pen: nl})
				case c == ' ' && r.kind == runText:
					cs = append(cs, splitPoint{s: i, e: i + 1, us: u, ue: u + 1, pen: penSpace})
				}
				u += byteUnits(c)
			}
		default:
			u += UTF16Len(d.vis[r.start:r.end])
		}
	}
	cs = append(cs, splitPoint{s: len(d.vis), e: len(d.vis), us: u, ue: u})
	return withForced(d.vis, cs, limit)
}

// withForced adds a candidate at every character boundary of each stretch between candidates that is too long
// for one message, so that a solution always exists.
func withForced(vis []byte, cs []splitPoint, limit int) []splitPoint {
	long := false
	for i := 1; i < len(cs); i++ {
		if cs[i].us-cs[i-1].ue > limit {
			long = true
			break
		}
	}
	if !long {
		return cs
	}
	out := make([]splitPoint, 0, len(cs)+len(vis)/2)
	out = append(out, cs[0])
	for i := 1; i < len(cs); i++ {
		p, q := cs[i-1], cs[i]
		if q.us-p.ue > limit {
			u, prev := p.ue, rune(-1)
			for b := p.e; b < q.s; {
				r, size := utf8.DecodeRune(vis[b:])
				if prev >= 0 {
					pen := penForced
					if joinsGlyph(prev, r) {
						pen = penGlyph
					}
					out = append(out, splitPoint{s: b, e: b, us: u, ue: u, pen: pen})
				}
				u += byteUnits(vis[b])
				b += size
				prev = r
			}
		}
		out = append(out, q)
	}
	return out
}

// joinsGlyph reports whether a and b probably display as one character (a combining mark, a variation selector, an
// emoji modifier or tag, a zero-width joiner sequence, a flag), so that splitting between them is a last resort.
func joinsGlyph(a, b rune) bool {
	switch {
	case a == 0x200D || b == 0x200D:
		return true
	case b >= 0xFE00 && b <= 0xFE0F, b >= 0xE0000 && b <= 0xE01EF, b >= 0x1F3FB && b <= 0x1F3FF:
		return true
	case a >= 0x1F1E6 && a <= 0x1F1FF && b >= 0x1F1E6 && b <= 0x1F1FF:
		return true
	}
	return unicode.In(b, unicode.Mn, unicode.Me)
}

// chooseSplits returns the indices of the candidates to split at (the last one is the end of the document): the
// fewest chunks of at most limit units, then the lowest total penalty. cost[j] is the best cost of the text
// before candidate j; the candidates i that may start the chunk ending at j form a window that only moves
// forward, whose minimum a monotonic deque keeps.
func chooseSplits(cs []splitPoint, limit int) []int {
	const chunkCost = 1 << 20
	cost := make([]int, len(cs))
	from := make([]int, len(cs))
	dq := make([]int, 0, 64) // candidate indices, increasing cost
	head := 0
	for j := 1; j < len(cs); j++ {
		i := j - 1
		for len(dq) > head && cost[dq[len(dq)-1]] >= cost[i] {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, i)
		// j-1 always fits (withForced made sure), so the window never empties.
		for cs[j].us-cs[dq[head]].ue > limit {
			head++
		}
		best := dq[head]
		cost[j] = cost[best] + chunkCost + cs[j].pen
		from[j] = best
	}
	var path []int
	for j := len(cs) - 1; j > 0; j = from[j] {
		path = append(path, j)
	}
	for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
		path[l], path[r] = path[r], path[l]
	}
	return path
}

// appendChunk appends the chunk of visible text vis[a:b], unless it is blank.
func (d *renderedDoc) appendChunk(out []Chunk, a, b int) []Chunk {
	if a >= b || len(bytes.TrimSpace(d.vis[a:b])) == 0 {
		return out
	}
	return append(out, Chunk{HTML: d.html(a, b), Text: string(d.vis[a:b])})
}

// html serializes vis[a:b] with its formatting, as a well-formed fragment.
func (d *renderedDoc) html(a, b int) string {
	var sb strings.Builder
	sb.Grow(b - a + (b-a)/8 + 64)
	i := sort.Search(len(d.runs), func(i int) bool { return d.runs[i].end > a })
	var open *htmlElem
	for ; i < len(d.runs) && d.runs[i].start < b; i++ {
		r := d.runs[i]
		s, e := max(r.start, a), min(r.end, b)
		if s >= e {
			continue
		}
		open = writeTransition(&sb, open, r.el)
		escapeHTMLText(&sb, d.vis[s:e])
	}
	writeTransition(&sb, open, nil)
	return sb.String()
}

// writeTransition closes the elements of from that to is not in, and opens those of to that from is not in.
func writeTransition(sb *strings.Builder, from, to *htmlElem) *htmlElem {
	if from == to {
		return to
	}
	lca := commonAncestor(from, to)
	for e := from; e != lca; e = e.parent {
		writeCloseTag(sb, e)
	}
	var stack [16]*htmlElem
	path := stack[:0]
	for e := to; e != lca; e = e.parent {
		path = append(path, e)
	}
	for i := len(path) - 1; i >= 0; i-- {
		writeOpenTag(sb, path[i])
	}
	return to
}

func commonAncestor(a, b *htmlElem) *htmlElem {
	for depthOf(a) > depthOf(b) {
		a = a.parent
	}
	for depthOf(b) > depthOf(a) {
		b = b.parent
	}
	for a != b {
		a, b = a.parent, b.parent
	}
	return a
}

func writeOpenTag(sb *strings.Builder, e *htmlElem) {
	switch e.kind {
	case elBold:
		sb.WriteString("<b>")
	case elItalic:
		sb.WriteString("<i>")
	case elStrike:
		sb.WriteString("<s>")
	case elCode:
		sb.WriteString("<code>")
	case elLink:
		sb.WriteString(`<a href="`)
		escapeHTMLAttr(sb, e.attr)
		sb.WriteString(`">`)
	case elQuote:
		sb.WriteString("<blockquote>")
	case elPre:
		if e.attr == "" {
			sb.WriteString("<pre>")
		} else {
			sb.WriteString(`<pre><code class="language-`)
			escapeHTMLAttr(sb, e.attr)
			sb.WriteString(`">`)
		}
	}
}

func writeCloseTag(sb *strings.Builder, e *htmlElem) {
	switch e.kind {
	case elBold:
		sb.WriteString("</b>")
	case elItalic:
		sb.WriteString("</i>")
	case elStrike:
		sb.WriteString("</s>")
	case elCode:
		sb.WriteString("</code>")
	case elLink:
		sb.WriteString("</a>")
	case elQuote:
		sb.WriteString("</blockquote>")
	case elPre:
		if e.attr == "" {
			sb.WriteString("</pre>")
		} else {
			sb.WriteString("</code></pre>")
		}
	}
}

// escapeHTMLText escapes what Telegram's HTML parser requires in text: &, < and >.
func escapeHTMLText(sb *strings.Builder, v []byte) {
	last := 0
	for i, c := range v {
		var rep string
		switch c {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		sb.Write(v[last:i])
		sb.WriteString(rep)
		last = i + 1
	}
	sb.Write(v[last:])
}

// escapeHTMLAttr escapes an attribute value: &, <, > and ".
func escapeHTMLAttr(sb *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&quot;"
		default:
			continue
		}
		sb.WriteString(s[last:i])
		sb.WriteString(rep)
		last = i + 1
	}
	sb.WriteString(s[last:])
}
