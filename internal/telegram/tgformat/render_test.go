package tgformat

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// update rewrites testdata/render/*.golden: go test ./internal/telegram/tgformat/ -run TestRenderGolden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestRenderFormatting(t *testing.T) {
	tests := []struct {
		name string
		in   string
		html string
		text string // empty: not checked beyond the validator
	}{
		{name: "plain", in: "Hello, world.", html: "Hello, world.", text: "Hello, world."},
		{name: "bold", in: "**bold** and __bold__", html: "<b>bold</b> and <b>bold</b>", text: "bold and bold"},
		{name: "italic", in: "*it* and _it_", html: "<i>it</i> and <i>it</i>"},
		{name: "nested", in: "**bold *both* bold**", html: "<b>bold <i>both</i> bold</b>", text: "bold both bold"},
		{name: "bold italic", in: "***x***", html: "<i><b>x</b></i>"},
		{name: "bold inside bold is not nested", in: "# Title with **bold**", html: "<b>Title with bold</b>"},
		{name: "strikethrough", in: "~~gone~~ ~one~", html: "<s>gone</s> <s>one</s>"},
		{
			name: "inline code escapes",
			in:   "run `a <b> && c > d` now",
			html: "run <code>a &lt;b&gt; &amp;&amp; c &gt; d</code> now",
			text: "run a <b> && c > d now",
		},
		{
			name: "inline code inside bold breaks out (Telegram cannot nest code)",
			in:   "**use `go vet` first**",
			html: "<b>use </b><code>go vet</code><b> first</b>",
		},
		{
			name: "fenced code with language",
			in:   "```go\nif a < b && c {\n\treturn \"x\"\n}\n```",
			html: "<pre><code class=\"language-go\">if a &lt; b &amp;&amp; c {\n\treturn \"x\"\n}</code></pre>",
			text: "if a < b && c {\n\treturn \"x\"\n}",
		},
		{name: "fenced code without language", in: "```\nx := 1\n```", html: "<pre>x := 1</pre>"},
		{name: "odd language dropped", in: "```go\"><b>\nx\n```", html: "<pre>x</pre>"},
		{name: "indented code", in: "    a <- b\n    c", html: "<pre>a &lt;- b\nc</pre>"},
		{
			name: "link with & in URL",
			in:   "[a & b](https://example.com/search?q=1&lang=en \"Title\")",
			html: `<a href="https://example.com/search?q=1&amp;lang=en">a &amp; b</a>`,
			text: "a & b",
		},
		{
			name: "link URL with quote and non-ASCII",
			in:   `[x](<https://example.com/a"b/é>)`,
			html: `<a href="https://example.com/a%22b/%C3%A9">x</a>`,
		},
		{name: "link with formatting", in: "[**go** doc](https://go.dev)", html: `<a href="https://go.dev"><b>go</b> doc</a>`},
		{name: "code inside link keeps the link", in: "[`os.Open`](https://pkg.go.dev/os#Open)", html: `<a href="https://pkg.go.dev/os#Open">os.Open</a>`},
		{name: "javascript link not linked", in: "[click](javascript:alert(1))", html: "click", text: "click"},
		{name: "relative link not linked", in: "[file](./x.md) [ftp](ftp://x.org/f)", html: "file ftp"},
		{name: "tg and mailto links", in: "[me](tg://user?id=1) [mail](mailto:a@b.c)", html: `<a href="tg://user?id=1">me</a> <a href="mailto:a@b.c">mail</a>`},
		{name: "empty link text shows the URL", in: "[](https://x.org)", html: `<a href="https://x.org">https://x.org</a>`},
		{
			name: "autolinks",
			in:   "<https://go.dev/x?a=1&b=2> www.example.com a@b.org",
			html: `<a href="https://go.dev/x?a=1&amp;b=2">https://go.dev/x?a=1&amp;b=2</a> <a href="http://www.example.com">www.example.com</a> <a href="mailto:a@b.org">a@b.org</a>`,
		},
		{name: "image becomes a link", in: "![a cat](https://e.org/cat.png)", html: `<a href="https://e.org/cat.png">a cat</a>`},
		{name: "image without alt", in: "![](https://e.org/cat.png)", html: `<a href="https://e.org/cat.png">image</a>`},
		{name: "image with a data URL is its alt text", in: "![dot](data:image/png;base64,AAAA)", html: "dot"},
		{
			name: "nested lists",
			in:   "- one\n- two\n  - nested *a*\n    1. deep\n    2. deeper\n- three",
			html: "• one\n• two\n  ◦ nested <i>a</i>\n    1. deep\n    2. deeper\n• three",
			text: "• one\n• two\n  ◦ nested a\n    1. deep\n    2. deeper\n• three",
		},
		{name: "ordered list start", in: "3. c\n4. d", html: "3. c\n4. d"},
		{name: "loose list", in: "- a\n\n- b", html: "• a\n\n• b"},
		{name: "list item continuation is indented", in: "- first line\n  second line", html: "• first line\n  second line"},
		{name: "task list", in: "- [ ] todo\n- [x] done", html: "• ☐ todo\n• ☑ done"},
		{name: "heading", in: "# Title\n\nBody text.", html: "<b>Title</b>\n\nBody text."},
		{name: "setext heading", in: "Title\n=====\nBody", html: "<b>Title</b>\n\nBody"},
		{name: "paragraphs and line breaks", in: "one\ntwo  \nthree\\\nfour\n\nnext", html: "one\ntwo\nthree\nfour\n\nnext"},
		{name: "thematic break", in: "a\n\n---\n\nb", html: "a\n\n———\n\nb"},
		{
			name: "blockquote",
			in:   "before\n\n> quoted **bold**\n> still\n>\n> > nested is flattened\n\nafter",
			html: "before\n<blockquote>quoted <b>bold</b>\nstill\n\nnested is flattened</blockquote>\nafter",
		},
		{name: "blockquote inside list item", in: "1. one\n   > quoted\n   > more\n2. two", html: "1. one\n<blockquote>quoted\nmore</blockquote>\n2. two"},
		{name: "code inside blockquote", in: "> ```sh\n> ls\n> ```", html: `<blockquote><pre><code class="language-sh">ls</code></pre></blockquote>`},
		{
			name: "table",
			in:   "| Name | Qty |\n|:-----|----:|\n| apple | 3 |\n| kiwi **fresh** | 12 |",
			html: "<pre>Name       | Qty\n-----------+----\napple      |   3\nkiwi fresh |  12</pre>",
			text: "Name       | Qty\n-----------+----\napple      |   3\nkiwi fresh |  12",
		},
		{
			name: "table with link, centre and wide characters",
			in:   "| a | b |\n|:-:|---|\n| 日本 | [go](https://go.dev) |",
			html: "<pre> a   | b\n-----+--------------------\n日本 | go (https://go.dev)</pre>",
		},
		{name: "raw HTML block escaped", in: "<script>alert(1)</script>", html: "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{
			name: "inline raw HTML escaped",
			in:   `say <b onclick="x">hi</b> & <i>bye</i>`,
			html: `say &lt;b onclick="x"&gt;hi&lt;/b&gt; &amp; &lt;i&gt;bye&lt;/i&gt;`,
			text: `say <b onclick="x">hi</b> & <i>bye</i>`,
		},
		{name: "br becomes a line break", in: "a<br>b<BR/>c", html: "a\nb\nc"},
		{name: "entities and escapes", in: `&amp; &lt;x&gt; &#x41; &copy; \* \&amp; \<b>`, html: "&amp; &lt;x&gt; A © * &amp;amp; &lt;b&gt;"},
		{name: "emoji", in: "**🎉 done** ✅", html: "<b>🎉 done</b> ✅"},
		{name: "CRLF", in: "a\r\nb\r\n\r\nc", html: "a\nb\n\nc"},
		{name: "invalid UTF-8 and NUL", in: "a\xffb\x00c", html: "a\uFFFDb\uFFFDc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := Render(tt.in)
			if len(chunks) != 1 {
				t.Fatalf("Render(%q) = %d chunks %q, want 1", tt.in, len(chunks), chunks)
			}
			c := chunks[0]
			if err := checkChunk(c, MaxMessageUTF16); err != nil {
				t.Errorf("Render(%q): %v\nHTML: %s", tt.in, err, c.HTML)
			}
			if c.HTML != tt.html {
				t.Errorf("Render(%q).HTML\n got: %q\nwant: %q", tt.in, c.HTML, tt.html)
			}
			if tt.text != "" && c.Text != tt.text {
				t.Errorf("Render(%q).Text\n got: %q\nwant: %q", tt.in, c.Text, tt.text)
			}
		})
	}
}

func TestRenderNothingVisible(t *testing.T) {
	for _, in := range []string{"", " ", "\n\t \n", "```\n```", "```go\n\n\n```", "[ref]: https://example.com"} {
		if got := Render(in); got != nil {
			t.Errorf("Render(%q) = %q, want nil", in, got)
		}
	}
}

func TestRenderGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "render", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/render/*.md")
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			chunks := Render(string(src))
			var sb strings.Builder
			for i, c := range chunks {
				if err := checkChunk(c, MaxMessageUTF16); err != nil {
					t.Errorf("chunk %d: %v", i, err)
				}
				fmt.Fprintf(&sb, "=== chunk %d of %d: %d UTF-16 units ===\n%s\n", i+1, len(chunks), UTF16Len(c.Text), c.HTML)
			}
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := sb.String(); got != string(want) {
				t.Errorf("Render(%s) differs from %s (run with -update to accept):\n%s", in, golden, firstLineDiff(got, string(want)))
			}
		})
	}
}

// firstLineDiff shows the first differing line of got and want.
func firstLineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %q\nwant: %q", i+1, gl, wl)
		}
	}
	return "no line differs"
}

// The parser is shared; rendering must be safe from several chats at once (run with -race).
func TestRenderConcurrent(t *testing.T) {
	in := benchReply()
	want := Render(in)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got := Render(in)
				if len(got) != len(want) || got[0] != want[0] {
					t.Error("concurrent Render differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

// benchReply is a typical 4 KB answer: headings, paragraphs, lists, a table, code and links.
func benchReply() string {
	var sb strings.Builder
	sb.WriteString("## Summary\n\nHere is what I found in **your repository**. The `internal/bot` package renders " +
		"Markdown into Telegram HTML; see [the docs](https://core.telegram.org/bots/api#html-style) & the notes below.\n\n")
	for i := range 6 {
		fmt.Fprintf(&sb, "%d. Step *%d*: run `go test ./...` and check https://example.com/build/%d?x=1&y=2\n", i+1, i, i)
	}
	sb.WriteString("\n- nested list:\n  - item with **bold** and _italic_\n  - ~~old~~ new\n\n")
	sb.WriteString("| File | Lines | Status |\n|------|------:|:------:|\n| render.go | 420 | ✅ |\n| split.go | 300 | ✅ |\n| bot.go | 250 | 🚧 |\n\n")
	sb.WriteString("```go\nfunc Render(markdown string) []Chunk {\n\td := buildDoc(markdown)\n\tif d == nil {\n\t\treturn nil\n\t}\n\treturn d.split(MaxMessageUTF16)\n}\n```\n\n")
	sb.WriteString("> Note: raw <html> from the model is escaped & never interpreted.\n\n")
	for sb.Len() < 4000 {
		sb.WriteString("The quick brown fox jumps over the lazy dog, and *then* it reads the **fine** manual at " +
			"[go.dev](https://go.dev/doc/effective_go). ")
	}
	return sb.String()
}

func BenchmarkRender(b *testing.B) {
	in := benchReply()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if len(Render(in)) != 1 {
			b.Fatal("want one chunk")
		}
	}
}
