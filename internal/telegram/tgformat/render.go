package tgformat

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Chunk is one Telegram message: HTML using only the tags Telegram's HTML parse mode allows, and the same text
// without markup as the fallback when Telegram still refuses the HTML.
type Chunk struct {
	HTML string
	Text string
}

// Render converts the model's Markdown (CommonMark + GFM strikethrough/tables/autolinks/task lists) into Telegram
// messages, each within Telegram's limit of [MaxMessageUTF16] UTF-16 code units of visible text, split without
// breaking a code block or a link whenever that is possible without sending more messages.
//
// Empty or whitespace-only input (or input that renders to nothing visible) yields nil: there is nothing to send,
// and the caller decides whether to say so.
//
// Formatting: bold, italic, strikethrough, inline code, fenced and indented code (with the language), links and
// blockquotes map to Telegram's tags. Headings become bold lines; list items get "• ", "◦ ", "▪ " or "1. "
// prefixes indented by nesting level; tables become a <pre> block with aligned columns; images become a link to
// the image; a thematic break becomes a line "———". Raw HTML from the model is shown escaped, never interpreted
// (except <br>, which becomes a line break). Only http(s), tg and mailto links become links; any other link
// keeps its text and loses its target. Soft line breaks are kept as line breaks, as the model wrote them.
func Render(markdown string) []Chunk {
	return renderLimit(markdown, MaxMessageUTF16)
}

// renderLimit is Render with a configurable limit, so tests can exercise splitting with short inputs.
func renderLimit(markdown string, limit int) []Chunk {
	d := buildDoc(markdown)
	if d == nil {
		return nil
	}
	return d.split(limit)
}

var markdownParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()
})

// elemKind is a Telegram formatting element.
type elemKind uint8

const (
	elBold elemKind = iota + 1
	elItalic
	elStrike
	elCode  // inline code
	elLink  // attr is the href
	elQuote // blockquote
	elPre   // attr is the language, possibly empty
)

// htmlElem is one open element; elements form a tree through parent, and a run names its innermost element.
// Identity matters: two runs inside the same bold span share its *htmlElem, so the serializer keeps it open.
type htmlElem struct {
	kind   elemKind
	depth  int
	attr   string
	parent *htmlElem
}

func (e *htmlElem) has(k elemKind) bool {
	for ; e != nil; e = e.parent {
		if e.kind == k {
			return true
		}
	}
	return false
}

// runKind says where a run of visible text may be split.
type runKind uint8

const (
	runText   runKind = iota // prose: split at line breaks, then at spaces
	runAtomic                // link text, inline code, list markers: not split unless nothing else fits
	runCode                  // code block content: split at line breaks
	runSep                   // the separator between two blocks: the best place to split, dropped when split there
)

// textRun is a range of renderedDoc.vis with its formatting and splitting rules.
type textRun struct {
	start, end int
	el         *htmlElem
	kind       runKind
	pen        uint8 // runSep only: the penalty of splitting here
}

// renderedDoc is the rendered document: all visible text in one buffer, partitioned into runs.
type renderedDoc struct {
	vis  []byte
	runs []textRun
}

type sepKind uint8

const (
	sepNone  sepKind = iota
	sepLine          // "\n": between items of a tight list, and at the edges of a blockquote
	sepBlock         // "\n\n": between paragraphs
)

// Split penalties: the splitter sends as few messages as possible, and among the ways to do so, the one whose
// split points have the lowest total penalty.
const (
	penBlock   = 0  // between blocks
	penItem    = 1  // between list items
	penHeading = 3  // right after a heading: the heading would end one message and its section start the next
	penLine    = 2  // at a line break inside a paragraph
	penCode    = 3  // at a line break inside a code block: the block is closed and reopened
	penSpace   = 4  // at a space
	penForced  = 10 // anywhere: a line too long for a message
	penGlyph   = 20 // inside what displays as one character (combining marks, ZWJ sequences)
)

type docBuilder struct {
	src  []byte
	d    *renderedDoc
	cur  *htmlElem // innermost open element (the blockquote, if any, at block level)
	quot *htmlElem // the open blockquote; nested quotes are flattened into it (Telegram does not nest them)

	indent []byte // indentation of continuation lines inside list items

	sep       sepKind // separator owed before the next content
	sepPen    uint8
	started   bool      // some content was emitted
	lastQuote *htmlElem // blockquote of the last content
	inLink    bool
}

// buildDoc parses markdown and renders it into a renderedDoc, or returns nil if nothing would be visible.
func buildDoc(markdown string) *renderedDoc {
	if strings.TrimSpace(markdown) == "" {
		return nil
	}
	src := []byte(sanitizeMarkdown(markdown))
	root := markdownParser().Parse(text.NewReader(src))
	b := &docBuilder{src: src, d: &renderedDoc{vis: make([]byte, 0, len(src)+len(src)/8), runs: make([]textRun, 0, 32)}}
	b.blocks(root, sepBlock, penBlock)
	if len(bytes.TrimSpace(b.d.vis)) == 0 {
		return nil
	}
	return b.d
}

// sanitizeMarkdown makes the input valid UTF-8 without NUL, with "\n" line endings.
func sanitizeMarkdown(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

// blocks renders the block children of parent, separated by sep.
func (b *docBuilder) blocks(parent ast.Node, sep sepKind, pen uint8) {
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		if prev := c.PreviousSibling(); prev != nil {
			p := pen
			if prev.Kind() == ast.KindHeading {
				p = penHeading
			}
			b.requestSep(sep, p)
		}
		b.block(c)
	}
}

func (b *docBuilder) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		b.inlines(n)
	case *ast.Heading:
		saved := b.push(elBold, "")
		b.inlines(n)
		b.cur = saved
	case *ast.ThematicBreak:
		b.write("———", runAtomic, b.cur)
	case *ast.CodeBlock:
		b.codeBlock(n, "")
	case *ast.FencedCodeBlock:
		b.codeBlock(n, fenceLanguage(n.Language(b.src)))
	case *ast.HTMLBlock:
		var buf []byte
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			buf = append(buf, seg.Value(b.src)...)
		}
		if n.HasClosure() {
			buf = append(buf, n.ClosureLine.Value(b.src)...)
		}
		b.write(strings.TrimRight(string(buf), "\n"), runText, b.cur)
	case *ast.Blockquote:
		// A blockquote is a box of its own: a list item's indentation does not continue inside it.
		savedQuote, savedCur, savedIndent := b.quot, b.cur, b.indent
		if b.quot == nil {
			b.quot = &htmlElem{kind: elQuote, depth: 1}
			b.cur = b.quot
		}
		b.indent = nil
		b.blocks(n, sepBlock, penBlock)
		b.quot, b.cur, b.indent = savedQuote, savedCur, savedIndent
	case *ast.List:
		b.list(n)
	case *east.Table:
		b.table(n)
	default:
		// Unknown blocks (from extensions we do not enable) still show their content.
		if n.Type() == ast.TypeBlock && n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeInline {
			b.inlines(n)
		} else {
			b.blocks(n, sepBlock, penBlock)
		}
	}
}

var listBullets = [...]string{"• ", "◦ ", "▪ "}

func (b *docBuilder) list(n *ast.List) {
	depth := 0
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	sep := sepBlock
	if n.IsTight {
		sep = sepLine
	}
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if item.PreviousSibling() != nil {
			b.requestSep(sep, penItem)
		}
		var marker string
		if n.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		} else {
			marker = listBullets[depth%len(listBullets)]
		}
		b.write(marker, runAtomic, b.quot)
		saved := b.indent
		b.indent = append(b.indent[:len(b.indent):len(b.indent)], strings.Repeat(" ", utf8.RuneCountInString(marker))...)
		b.blocks(item, sep, penItem)
		b.indent = saved
	}
}

func (b *docBuilder) codeBlock(n ast.Node, lang string) {
	var buf []byte
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		buf = append(buf, seg.Value(b.src)...)
	}
	code := strings.TrimRight(string(buf), "\n")
	if code == "" {
		return
	}
	b.write(code, runCode, b.preElem(lang))
}

func (b *docBuilder) preElem(lang string) *htmlElem {
	return &htmlElem{kind: elPre, attr: lang, parent: b.quot, depth: depthOf(b.quot) + 1}
}

func depthOf(e *htmlElem) int {
	if e == nil {
		return 0
	}
	return e.depth
}

// fenceLanguage keeps a fence's language only when it looks like one.
func fenceLanguage(info []byte) string {
	if len(info) == 0 || len(info) > 32 {
		return ""
	}
	for _, c := range info {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '+' || c == '-' || c == '#' || c == '.'
		if !ok {
			return ""
		}
	}
	return string(info)
}

// push opens an inline element and returns the element to restore afterwards. Bold inside bold (and the like)
// is not nested again: Telegram rejects nested entities of one type.
func (b *docBuilder) push(k elemKind, attr string) *htmlElem {
	saved := b.cur
	if (k == elBold || k == elItalic || k == elStrike || k == elLink) && b.cur.has(k) {
		return saved
	}
	b.cur = &htmlElem{kind: k, attr: attr, parent: b.cur, depth: depthOf(b.cur) + 1}
	return saved
}

func (b *docBuilder) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b.inline(c)
	}
}

func (b *docBuilder) textKind() runKind {
	if b.inLink {
		return runAtomic
	}
	return runText
}

func (b *docBuilder) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(b.src)
		if !n.IsRaw() {
			v = unescapeMarkdown(v)
		}
		b.write(util.BytesToReadOnlyString(v), b.textKind(), b.cur) // write copies it
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.write("\n", b.textKind(), b.cur)
		}
	case *ast.String:
		v := n.Value
		if !n.IsCode() && !n.IsRaw() {
			v = unescapeMarkdown(v)
		}
		b.write(util.BytesToReadOnlyString(v), b.textKind(), b.cur) // write copies it
	case *ast.CodeSpan:
		code := codeSpanText(n, b.src)
		if b.inLink {
			// Telegram does not allow code inside a link: keep the link, lose the code style.
			b.write(code, runAtomic, b.cur)
		} else {
			// Nor inside bold, italic or strikethrough: the code style wins.
			b.write(code, runAtomic, &htmlElem{kind: elCode, parent: b.quot, depth: depthOf(b.quot) + 1})
		}
	case *ast.Emphasis:
		k := elItalic
		if n.Level >= 2 {
			k = elBold
		}
		saved := b.push(k, "")
		b.inlines(n)
		b.cur = saved
	case *east.Strikethrough:
		saved := b.push(elStrike, "")
		b.inlines(n)
		b.cur = saved
	case *ast.Link:
		b.link(markdownLinkURL(n.Destination), func() { b.inlines(n) })
	case *ast.AutoLink:
		href := string(n.URL(b.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !hasPrefixFoldASCII(href, "mailto:") {
			href = "mailto:" + href
		}
		label := string(n.Label(b.src))
		b.link(escapeLinkURL(href), func() { b.write(label, runAtomic, b.cur) })
	case *ast.Image:
		alt := inlinePlainText(n, b.src)
		if alt == "" {
			alt = "image"
		}
		b.link(markdownLinkURL(n.Destination), func() { b.write(alt, runAtomic, b.cur) })
	case *ast.RawHTML:
		raw := rawHTMLText(n, b.src)
		if isBreakTag(raw) {
			b.write("\n", b.textKind(), b.cur)
		} else {
			b.write(raw, b.textKind(), b.cur)
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.write("☑ ", runAtomic, b.cur)
		} else {
			b.write("☐ ", runAtomic, b.cur)
		}
	default:
		b.inlines(n)
	}
}

// link renders body as a link to href when Telegram may link there, else as plain text. A link whose text is
// empty shows its address.
func (b *docBuilder) link(href string, body func()) {
	if b.inLink || !linkAllowed(href) {
		body()
		return
	}
	saved := b.push(elLink, href)
	b.inLink = true
	before := len(b.d.vis)
	body()
	if len(b.d.vis) == before {
		b.write(href, runAtomic, b.cur)
	}
	b.inLink = false
	b.cur = saved
}

// requestSep owes a separator before the next content; the strongest request wins.
func (b *docBuilder) requestSep(k sepKind, pen uint8) {
	switch {
	case k > b.sep:
		b.sep, b.sepPen = k, pen
	case k == b.sep && pen > b.sepPen:
		b.sepPen = pen
	}
}

// write appends visible text s formatted by el, first paying any separator owed, and indents the lines it starts
// inside a list item (code blocks keep their own indentation).
func (b *docBuilder) write(s string, kind runKind, el *htmlElem) {
	if s == "" {
		return
	}
	if b.started && b.sep != sepNone {
		sep, sepEl := b.sep, b.quot
		if b.quot != b.lastQuote {
			sep, sepEl = sepLine, nil
		}
		if sep == sepLine {
			b.appendRun("\n", runSep, sepEl, b.sepPen)
		} else {
			b.appendRun("\n\n", runSep, sepEl, b.sepPen)
		}
		if len(b.indent) > 0 {
			b.appendRun(string(b.indent), runAtomic, b.quot, 0)
		}
	}
	b.sep, b.sepPen = sepNone, 0
	b.started = true
	b.lastQuote = b.quot
	if len(b.indent) > 0 && kind != runCode {
		for {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				break
			}
			b.appendRun(s[:i+1], kind, el, 0)
			b.appendRun(string(b.indent), kind, el, 0)
			s = s[i+1:]
		}
	}
	b.appendRun(s, kind, el, 0)
}

func (b *docBuilder) appendRun(s string, kind runKind, el *htmlElem, pen uint8) {
	if s == "" {
		return
	}
	d := b.d
	start := len(d.vis)
	d.vis = append(d.vis, s...)
	if n := len(d.runs); n > 0 && kind != runSep {
		if last := &d.runs[n-1]; last.end == start && last.el == el && last.kind == kind {
			last.end = len(d.vis)
			return
		}
	}
	d.runs = append(d.runs, textRun{start: start, end: len(d.vis), el: el, kind: kind, pen: pen})
}

// table renders a GFM table as a preformatted block with aligned columns. Cell formatting is dropped (a <pre>
// cannot hold any); a link's address follows its text.
func (b *docBuilder) table(n *east.Table) {
	var rows [][]string
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, inlinePlainText(c, b.src))
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return
	}
	widths := make([]int, cols)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], monoWidth(c))
		}
	}
	align := func(i int) east.Alignment {
		if i < len(n.Alignments) {
			return n.Alignments[i]
		}
		return east.AlignNone
	}
	var sb strings.Builder
	for ri, r := range rows {
		if ri > 0 {
			sb.WriteByte('\n')
		}
		var line strings.Builder
		for i := range cols {
			if i > 0 {
				line.WriteString(" | ")
			}
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			pad := widths[i] - monoWidth(cell)
			switch align(i) {
			case east.AlignRight:
				line.WriteString(strings.Repeat(" ", pad))
				line.WriteString(cell)
			case east.AlignCenter:
				line.WriteString(strings.Repeat(" ", pad/2))
				line.WriteString(cell)
				line.WriteString(strings.Repeat(" ", pad-pad/2))
			default:
				line.WriteString(cell)
				line.WriteString(strings.Repeat(" ", pad))
			}
		}
		sb.WriteString(strings.TrimRight(line.String(), " "))
		if ri == 0 {
			sb.WriteByte('\n')
			for i := range cols {
				if i > 0 {
					sb.WriteString("-+-")
				}
				sb.WriteString(strings.Repeat("-", max(widths[i], 1)))
			}
		}
	}
	b.write(sb.String(), runCode, b.preElem(""))
}

// inlinePlainText is the visible text of n's inline content, without formatting, on one line.
func inlinePlainText(n ast.Node, src []byte) string {
	var sb strings.Builder
	writeInlinePlain(&sb, n, src)
	return strings.TrimSpace(sb.String())
}

func writeInlinePlain(sb *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(src)
			if !c.IsRaw() {
				v = unescapeMarkdown(v)
			}
			sb.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				sb.WriteByte(' ')
			}
		case *ast.String:
			v := c.Value
			if !c.IsCode() && !c.IsRaw() {
				v = unescapeMarkdown(v)
			}
			sb.Write(v)
		case *ast.CodeSpan:
			sb.WriteString(codeSpanText(c, src))
		case *ast.AutoLink:
			sb.Write(c.Label(src))
		case *ast.Link:
			start := sb.Len()
			writeInlinePlain(sb, c, src)
			href := markdownLinkURL(c.Destination)
			if linkAllowed(href) && !strings.Contains(sb.String()[start:], href) {
				sb.WriteString(" (" + href + ")")
			}
		case *ast.RawHTML:
			raw := rawHTMLText(c, src)
			if isBreakTag(raw) {
				sb.WriteByte(' ')
			} else {
				sb.WriteString(raw)
			}
		case *east.TaskCheckBox:
			if c.IsChecked {
				sb.WriteString("☑ ")
			} else {
				sb.WriteString("☐ ")
			}
		default:
			writeInlinePlain(sb, c, src)
		}
	}
}

func codeSpanText(n *ast.CodeSpan, src []byte) string {
	var sb strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		var v []byte
		switch c := c.(type) {
		case *ast.Text:
			v = c.Value(src)
		case *ast.String:
			v = c.Value
		}
		if len(v) > 0 && v[len(v)-1] == '\n' {
			sb.Write(v[:len(v)-1])
			sb.WriteByte(' ')
		} else {
			sb.Write(v)
		}
	}
	return sb.String()
}

func rawHTMLText(n *ast.RawHTML, src []byte) string {
	var sb strings.Builder
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		sb.Write(seg.Value(src))
	}
	return sb.String()
}

// isBreakTag reports whether raw is <br>, <br/> or <br />, which models put in tables and lists.
func isBreakTag(raw string) bool {
	if len(raw) < 4 || len(raw) > 8 || !hasPrefixFoldASCII(raw, "<br") {
		return false
	}
	rest := strings.TrimSpace(strings.TrimSuffix(raw[3:], ">"))
	return rest == "" || rest == "/"
}

func hasPrefixFoldASCII(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// markdownLinkURL resolves a Markdown link destination (backslash escapes, entity references) and percent-encodes what
// a URL may not hold.
func markdownLinkURL(dest []byte) string {
	return string(util.URLEscape(dest, true))
}

func escapeLinkURL(s string) string {
	return string(util.URLEscape([]byte(s), false))
}

// linkAllowed reports whether Telegram should get href as a link: http, https, tg and mailto only.
func linkAllowed(href string) bool {
	i := strings.IndexByte(href, ':')
	if i <= 0 {
		return false
	}
	switch strings.ToLower(href[:i]) {
	case "http", "https":
		return len(href) > i+3 && href[i+1:i+3] == "//"
	case "tg", "mailto":
		return len(href) > i+1
	}
	return false
}

// unescapeMarkdown resolves Markdown backslash escapes and HTML entity references in text, as goldmark's HTML renderer
// does, in one pass so that "\&amp;" stays "&amp;".
func unescapeMarkdown(v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return v
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]):
			out = append(out, v[i+1])
			i++
		case c == '&':
			if r, n := decodeEntity(v[i:]); n > 0 {
				out = append(out, r...)
				i += n - 1
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// decodeEntity decodes the entity reference at the start of v, returning its characters and length, or n == 0.
func decodeEntity(v []byte) (chars []byte, n int) {
	end := bytes.IndexByte(v, ';')
	if end < 2 || end > 40 {
		return nil, 0
	}
	name := v[1:end]
	if name[0] == '#' {
		digits, base := name[1:], 10
		if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
			digits, base = digits[1:], 16
		}
		if len(digits) == 0 || len(digits) > 7 {
			return nil, 0
		}
		cp, err := strconv.ParseUint(string(digits), base, 32)
		if err != nil {
			return nil, 0
		}
		return utf8.AppendRune(nil, util.ToValidRune(rune(cp))), end + 1
	}
	for _, c := range name {
		if !util.IsAlphaNumeric(c) {
			return nil, 0
		}
	}
	e, ok := util.LookUpHTML5EntityByName(string(name))
	if !ok {
		return nil, 0
	}
	return e.Characters, end + 1
}

// monoWidth approximates how many monospace columns s takes: wide East Asian characters and emoji take two,
// combining marks and joiners none.
func monoWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r == 0x200D || r >= 0xFE00 && r <= 0xFE0F || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
			r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
			r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1F64F, r >= 0x1F900 && r <= 0x1F9FF,
			r >= 0x20000 && r <= 0x3FFFD:
			w += 2
		default:
			w++
		}
	}
	return w
}
