package tgformat

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkChunk reports anything in c that Telegram's HTML parse mode would refuse or silently fix, and checks that
// c.Text is exactly the visible text of c.HTML, not blank, within limit UTF-16 units.
func checkChunk(c Chunk, limit int) error {
	visible, err := parseTelegramHTML(c.HTML)
	if err != nil {
		return err
	}
	if visible != c.Text {
		return fmt.Errorf("chunk.Text %q is not the visible text %q", c.Text, visible)
	}
	if !utf8.ValidString(c.Text) {
		return fmt.Errorf("chunk.Text is not valid UTF-8: %q", c.Text)
	}
	if n := UTF16Len(c.Text); n > limit {
		return fmt.Errorf("visible text is %d UTF-16 units, limit %d", n, limit)
	}
	if strings.TrimSpace(c.Text) == "" {
		return fmt.Errorf("blank chunk %q", c.HTML)
	}
	return nil
}

type openHTMLElem struct {
	name  string
	start int // length of the visible text when opened
}

// parseTelegramHTML is a tag-stack validator for the HTML we emit, stricter than Telegram: only b, i, u, s,
// tg-spoiler, code, pre, a href and blockquote; only &lt; &gt; &amp; &quot; and numeric entities; every tag closed
// in order; no empty element; and the nesting rules of Telegram's entities (nothing inside code or pre except
// <pre><code class="language-…">; code and pre only inside a blockquote; no link in a link; no blockquote inside
// anything; no element inside one of its own kind). It returns the visible text.
func parseTelegramHTML(s string) (string, error) {
	var out strings.Builder
	var stack []openHTMLElem
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '&':
			r, n := telegramEntity(s[i:])
			if n == 0 {
				return "", fmt.Errorf("bare & at byte %d in %q", i, s)
			}
			out.WriteString(r)
			i += n
		case '>':
			return "", fmt.Errorf("bare > at byte %d in %q", i, s)
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed tag at byte %d in %q", i, s)
			}
			tagStart, tag := i, s[i+1:i+end]
			i += end + 1
			if strings.ContainsAny(tag, "<\n") {
				return "", fmt.Errorf("bad tag %q", tag)
			}
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1].name != name {
					return "", fmt.Errorf("unexpected </%s> at byte %d in %q (open: %v)", name, tagStart, s, stack)
				}
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if out.Len() == top.start {
					return "", fmt.Errorf("empty <%s> at byte %d in %q", name, tagStart, s)
				}
				if name == "code" && len(stack) > 0 && stack[len(stack)-1].name == "pre" && !strings.HasPrefix(s[i:], "</pre>") {
					return "", fmt.Errorf("<pre><code> not closed by </code></pre> in %q", s)
				}
				continue
			}
			name, attrs, _ := strings.Cut(tag, " ")
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].name
			}
			codeInPre := name == "code" && parent == "pre"
			switch name {
			case "b", "i", "u", "s", "tg-spoiler", "pre", "blockquote":
				if attrs != "" {
					return "", fmt.Errorf("<%s> with attributes %q", name, attrs)
				}
			case "code":
				if codeInPre {
					if !strings.HasSuffix(s[:tagStart], "<pre>") {
						return "", fmt.Errorf("<code> inside <pre> after text in %q", s)
					}
					lang, ok := htmlAttrValue(attrs, "class")
					if !ok || !strings.HasPrefix(lang, "language-") || len(lang) == len("language-") {
						return "", fmt.Errorf("<pre><code> without class=\"language-…\": %q", attrs)
					}
				} else if attrs != "" {
					return "", fmt.Errorf("<code> with attributes %q", attrs)
				}
			case "a":
				href, ok := htmlAttrValue(attrs, "href")
				if !ok {
					return "", fmt.Errorf("<a> without exactly one href: %q", attrs)
				}
				if !linkAllowed(href) {
					return "", fmt.Errorf("link to a forbidden URL %q", href)
				}
			default:
				return "", fmt.Errorf("unsupported tag <%s> in %q", name, s)
			}
			for _, o := range stack {
				switch {
				case o.name == name:
					return "", fmt.Errorf("<%s> inside <%s> in %q", name, o.name, s)
				case o.name == "code", o.name == "pre" && !codeInPre:
					return "", fmt.Errorf("<%s> inside <%s> in %q", name, o.name, s)
				case (name == "pre" || name == "code" && !codeInPre || name == "blockquote") && o.name != "blockquote":
					return "", fmt.Errorf("<%s> inside <%s> in %q", name, o.name, s)
				}
			}
			stack = append(stack, openHTMLElem{name: name, start: out.Len()})
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("unclosed %v in %q", stack, s)
	}
	return out.String(), nil
}

// htmlAttrValue parses attrs as exactly name="value" and returns the unescaped value.
func htmlAttrValue(attrs, name string) (string, bool) {
	v, ok := strings.CutPrefix(attrs, name+`="`)
	if !ok || !strings.HasSuffix(v, `"`) {
		return "", false
	}
	v = v[:len(v)-1]
	if strings.ContainsAny(v, `"<>`) {
		return "", false
	}
	var sb strings.Builder
	for i := 0; i < len(v); {
		if v[i] != '&' {
			sb.WriteByte(v[i])
			i++
			continue
		}
		r, n := telegramEntity(v[i:])
		if n == 0 {
			return "", false
		}
		sb.WriteString(r)
		i += n
	}
	return sb.String(), true
}

// telegramEntity decodes the entity Telegram accepts at the start of s: &lt; &gt; &amp; &quot; or numeric.
func telegramEntity(s string) (string, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 10 {
		return "", 0
	}
	switch name := s[1:semi]; name {
	case "lt":
		return "<", semi + 1
	case "gt":
		return ">", semi + 1
	case "amp":
		return "&", semi + 1
	case "quot":
		return `"`, semi + 1
	default:
		num, ok := strings.CutPrefix(name, "#")
		if !ok {
			return "", 0
		}
		base := 10
		if hex, ok := strings.CutPrefix(num, "x"); ok {
			num, base = hex, 16
		}
		v, err := strconv.ParseUint(num, base, 32)
		if err != nil || !utf8.ValidRune(rune(v)) || v == 0 {
			return "", 0
		}
		return string(rune(v)), semi + 1
	}
}

// checkChunks checks every chunk and that together they hold all the visible text of markdown, in order, losing
// only whitespace at the split points.
func checkChunks(t *testing.T, markdown string, chunks []Chunk, limit int) {
	t.Helper()
	for i, c := range chunks {
		if err := checkChunk(c, limit); err != nil {
			t.Fatalf("chunk %d of %d: %v", i+1, len(chunks), err)
		}
	}
	d := buildDoc(markdown)
	if d == nil {
		if chunks != nil {
			t.Fatalf("nothing visible, but %d chunks", len(chunks))
		}
		return
	}
	full, pos := string(d.vis), 0
	for i, c := range chunks {
		idx := strings.Index(full[pos:], c.Text)
		if idx < 0 {
			t.Fatalf("chunk %d text %q is not next in the visible text %q", i+1, c.Text, full[pos:])
		}
		if gap := full[pos : pos+idx]; strings.TrimSpace(gap) != "" {
			t.Fatalf("text %q lost before chunk %d", gap, i+1)
		}
		pos += idx + len(c.Text)
	}
	if rest := full[pos:]; strings.TrimSpace(rest) != "" {
		t.Fatalf("text %q lost after the last chunk", rest)
	}
}

// proseOf returns paragraphs of plain words adding up to about n bytes.
func proseOf(n int, word string) string {
	var sb strings.Builder
	for p := 0; sb.Len() < n; p++ {
		if p > 0 {
			sb.WriteString("\n\n")
		}
		for w := 0; w < 80 && sb.Len() < n; w++ {
			if w > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(word)
		}
	}
	return sb.String()
}

func pythonLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("    print(f\"line {%d}: {a < b and c > d}\")  # %03d", i, i)
	}
	return lines
}

// A 6,000-character answer whose code block straddles the 4,096 mark: splitting before the block still fits in
// two messages, so the block stays whole.
func TestSplitKeepsCodeBlockWhole(t *testing.T) {
	lines := pythonLines(28)
	code := "```python\n" + strings.Join(lines, "\n") + "\n```"
	md := proseOf(3000, "lorem") + "\n\n" + code + "\n\n" + proseOf(1500, "ipsum")
	if len(md) < 5900 || len(md) > 6300 {
		t.Fatalf("test input is %d bytes, want about 6000", len(md))
	}
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	var withCode []int
	for i, c := range chunks {
		if strings.Contains(c.HTML, "<pre") {
			withCode = append(withCode, i)
		}
	}
	if len(withCode) != 1 {
		t.Fatalf("the code block is in chunks %v, want exactly one", withCode)
	}
	c := chunks[withCode[0]]
	if strings.Count(c.HTML, `<pre><code class="language-python">`) != 1 || !strings.Contains(c.Text, strings.Join(lines, "\n")) {
		t.Errorf("the code block is not whole in chunk %d:\n%s", withCode[0]+1, c.HTML)
	}
}

// A code block longer than a message is split at line boundaries into blocks closed and reopened with the same
// language.
func TestSplitLongCodeBlock(t *testing.T) {
	lines := pythonLines(250) // about 13,000 characters
	md := "Here:\n\n```go\n" + strings.Join(lines, "\n") + "\n```\n\nDone."
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	if len(chunks) != 4 {
		t.Fatalf("got %d chunks, want 4", len(chunks))
	}
	whole := make(map[string]bool, len(lines))
	for _, l := range lines {
		whole[l] = true
	}
	for i, c := range chunks {
		if strings.Count(c.HTML, `<pre><code class="language-go">`) != 1 || strings.Count(c.HTML, "</code></pre>") != 1 {
			t.Errorf("chunk %d has not one reopened code block:\n%.200s", i+1, c.HTML)
		}
		for _, l := range strings.Split(c.Text, "\n") {
			if strings.HasPrefix(l, "    print") && !whole[l] {
				t.Errorf("chunk %d breaks the line %q", i+1, l)
			}
		}
	}
	if !strings.HasPrefix(chunks[0].Text, "Here:\n\n") || !strings.HasSuffix(chunks[3].Text, "\n\nDone.") {
		t.Errorf("prose around the block moved: %q … %q", chunks[0].Text[:20], chunks[3].Text[len(chunks[3].Text)-20:])
	}
}

// Emoji take two UTF-16 units: chunks must be cut by UTF-16 length, neither by bytes nor by runes.
func TestSplitEmojiCountedInUTF16(t *testing.T) {
	// One paragraph of words of 5 emoji (10 units, 20 bytes each): about 6,600 units in all.
	md := strings.ReplaceAll(proseOf(12000, "😀😁🎉👍🚀"), "\n\n", " ")
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	if n := UTF16Len(chunks[0].Text); n < 3900 {
		t.Errorf("first chunk holds %d UTF-16 units, want it nearly full", n)
	}
}

func TestSplitLongLineWithoutSpaces(t *testing.T) {
	md := strings.Repeat("x", 10000)
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	var lens []int
	for _, c := range chunks {
		lens = append(lens, len(c.Text))
	}
	if fmt.Sprint(lens) != "[4096 4096 1808]" {
		t.Errorf("chunk lengths %v, want [4096 4096 1808]", lens)
	}
}

// With no better split point, the split still falls between what displays as characters, not inside a
// zero-width-joiner sequence.
func TestSplitDoesNotCutGlyphs(t *testing.T) {
	family := "👨\u200d👩\u200d👧" // 8 UTF-16 units
	md := strings.Repeat(family, 1000)
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	for i, c := range chunks {
		if strings.ReplaceAll(c.Text, family, "") != "" {
			t.Errorf("chunk %d cuts a family emoji", i+1)
		}
	}
}

func TestSplitKeepsLinkWhole(t *testing.T) {
	linkText := strings.TrimSpace(strings.Repeat("a long link text ", 20))
	md := proseOf(3950, "word") + " [" + linkText + "](https://example.com/very/long/path?q=1&r=2) " + proseOf(1000, "tail")
	chunks := Render(md)
	checkChunks(t, md, chunks, MaxMessageUTF16)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	link := `<a href="https://example.com/very/long/path?q=1&amp;r=2">` + linkText + "</a>"
	if n := strings.Count(chunks[0].HTML+chunks[1].HTML, "<a "); n != 1 {
		t.Fatalf("%d links, want 1", n)
	}
	if !strings.Contains(chunks[0].HTML, link) && !strings.Contains(chunks[1].HTML, link) {
		t.Errorf("link split or changed")
	}
}

// A link longer than a message must be split; each part stays a link to the same address.
func TestSplitLinkLongerThanMessage(t *testing.T) {
	md := "[" + strings.Repeat("linktext ", 15) + "](https://x.org/?a&b)"
	chunks := renderLimit(md, 50)
	checkChunks(t, md, chunks, 50)
	if len(chunks) != 3 {
		t.Fatalf("got %d chunks, want 3: %q", len(chunks), chunks)
	}
	for i, c := range chunks {
		if !strings.HasPrefix(c.HTML, `<a href="https://x.org/?a&amp;b">`) || !strings.HasSuffix(c.HTML, "</a>") {
			t.Errorf("chunk %d is not a link: %s", i+1, c.HTML)
		}
	}
}

func TestSplitPrefersBlocks(t *testing.T) {
	p1, p2 := proseOf(3000, "alpha"), proseOf(3000, "beta")
	p1 = strings.ReplaceAll(p1, "\n\n", " ") // one long paragraph each
	p2 = strings.ReplaceAll(p2, "\n\n", " ")
	chunks := Render(p1 + "\n\n" + p2)
	checkChunks(t, p1+"\n\n"+p2, chunks, MaxMessageUTF16)
	if len(chunks) != 2 || chunks[0].Text != p1 || chunks[1].Text != p2 {
		t.Errorf("not split between the paragraphs: %d chunks", len(chunks))
	}
}

func TestSplitSmallLimit(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string // HTML of each chunk
	}{
		{
			name:  "line break before space",
			in:    "aaaa bbbb\ncccc dddd",
			limit: 14,
			want:  []string{"aaaa bbbb", "cccc dddd"},
		},
		{
			name:  "formatting reopened",
			in:    "**bold words *and italic* go on**",
			limit: 16,
			want:  []string{"<b>bold words <i>and</i></b>", "<b><i>italic</i> go on</b>"},
		},
		{
			name:  "blockquote reopened",
			in:    "> first line\n> second line",
			limit: 12,
			want:  []string{"<blockquote>first line</blockquote>", "<blockquote>second line</blockquote>"},
		},
		{
			name:  "list items",
			in:    "- apples\n- pears\n  - green\n  - red",
			limit: 20,
			want:  []string{"• apples\n• pears", "  ◦ green\n  ◦ red"},
		},
		{
			name:  "heading stays with its section",
			in:    "intro text\n\n# Title\n\nbody",
			limit: 20,
			want:  []string{"intro text", "<b>Title</b>\n\nbody"},
		},
		{
			name:  "code closed and reopened",
			in:    "```sh\nls -la\necho hi\n```",
			limit: 10,
			want:  []string{`<pre><code class="language-sh">ls -la</code></pre>`, `<pre><code class="language-sh">echo hi</code></pre>`},
		},
		{
			name:  "entities never cut",
			in:    "a&b<c>d&e<f>g",
			limit: 5,
			want:  []string{"a&amp;b&lt;c", "&gt;d&amp;e&lt;", "f&gt;g"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := renderLimit(tt.in, tt.limit)
			checkChunks(t, tt.in, chunks, tt.limit)
			var got []string
			for _, c := range chunks {
				got = append(got, c.HTML)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("renderLimit(%q, %d)\n got: %q\nwant: %q", tt.in, tt.limit, got, tt.want)
			}
		})
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"**bold *nested* text** and `code <>&` [link](https://x.org/?a&b) ~~s~~",
		"# H\n\n- a\n  - b\n    1. c\n\n> q **b**\n> > qq\n\n```go\nx\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |",
		"<b>raw</b><br>[js](javascript:x) ![i](https://i/x.png) www.x.org a@b.c &amp; \\* &#0; &#x1F600;",
		"😀😀 👨\u200d👩\u200d👧 \u0301x e\u0301 🇫🇷🇩🇪",
		strings.Repeat("word ", 300),
		strings.Repeat("x", 500),
		"```\n" + strings.Repeat("line\n", 100) + "```",
		"- [ ] a\n- [x] b\n\n***\n\n    indented\n\n<div>\nblock\n</div>",
		"[" + strings.Repeat("t", 300) + "](https://e.org)",
		"a\r\nb\x00c\xff",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(30))
	}
	f.Fuzz(func(t *testing.T, md string, small uint8) {
		limit := MaxMessageUTF16
		if small > 0 {
			limit = int(small) // 1..255; the splitter raises it to 2 at least
		}
		chunks := renderLimit(md, limit)
		checkChunks(t, md, chunks, max(limit, 2))
	})
}

// BenchmarkRenderSplit renders a 20 KB answer into several messages.
func BenchmarkRenderSplit(b *testing.B) {
	in := strings.Repeat(benchReply()+"\n\n", 5)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if len(Render(in)) < 4 {
			b.Fatal("want at least 4 chunks")
		}
	}
}
