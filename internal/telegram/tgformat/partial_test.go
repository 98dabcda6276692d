package tgformat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCompletePartial(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"some **bold", "some **bold**"},
		{"some **bold ", "some **bold**"},
		{"some **", "some"},
		{"some *it", "some *it*"},
		{"some _it", "some _it_"},
		{"snake_case_name", "snake_case_name"},
		{"~~gone", "~~gone~~"},
		{"**bold *both", "**bold *both***"},
		{"**done** and `co", "**done** and `co`"},
		{"call `x", "call `x`"},
		{"call `", "call"},
		{"`a ** b", "`a ** b`"},
		{"see [the docs](https://exa", "see the docs"},
		{"see **[the docs](https://exa", "see **the docs**"},
		{"see [the docs](https://example.org) now", "see [the docs](https://example.org) now"},
		{"* item one\n* item **two", "* item one\n* item **two**"},
		{"para one **open\n\npara two", "para one **open\n\npara two"},
		{"```go\nfunc main() {", "```go\nfunc main() {\n```"},
		{"```go\nx\n```\nafter *it", "```go\nx\n```\nafter *it*"},
		{"text\n``", "text\n"},
		{"~~~\ncode\n", "~~~\ncode\n~~~"},
		{"````\n```\nstill code", "````\n```\nstill code\n````"},
		{`escaped \*not`, `escaped \*not`},
		{"***both", "***both***"},
	}
	for _, tt := range tests {
		if got := CompletePartial(tt.in); got != tt.want {
			t.Errorf("CompletePartial(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Every prefix of an answer, as a stream shows it, renders to chunks
// Telegram takes; and the whole answer renders as Render renders it.
func TestRenderPartialPrefixes(t *testing.T) {
	for _, name := range []string{"kitchen_sink.md", "long_answer.md"} {
		src, err := os.ReadFile(filepath.Join("testdata", "render", name))
		if err != nil {
			t.Fatal(err)
		}
		md := string(src)
		stride := max(1, len(md)/600) // every byte of a short answer, 600 cuts of a long one
		for i := 0; i <= len(md); i += stride {
			for i < len(md) && !utf8.RuneStart(md[i]) {
				i++
			}
			for j, c := range RenderPartial(md[:i]) {
				if err := checkChunk(c, MaxMessageUTF16); err != nil {
					t.Fatalf("%s, prefix of %d bytes, chunk %d: %v\n%q", name, i, j, err, md[:i])
				}
			}
		}
		if got, want := fmt.Sprint(RenderPartial(md)), fmt.Sprint(Render(md)); got != want && !strings.HasSuffix(md, "\n") {
			t.Errorf("%s: the finished answer renders differently when partial", name)
		}
	}
}

// TestRenderPartialGolden shows a streamed answer as the chat sees it,
// step by step: testdata/partial/*.md cut at every line and at each "|".
func TestRenderPartialGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "partial", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata/partial/*.md (%v)", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			steps := strings.Split(string(src), "|")
			for k := range steps {
				prefix := strings.Join(steps[:k+1], "")
				chunks := RenderPartial(prefix)
				fmt.Fprintf(&sb, "=== step %d: %q\n", k+1, prefix[max(0, len(prefix)-40):])
				for i, c := range chunks {
					if err := checkChunk(c, MaxMessageUTF16); err != nil {
						t.Errorf("step %d chunk %d: %v", k+1, i, err)
					}
					sb.WriteString(c.HTML + "\n")
				}
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
				t.Errorf("differs from %s (run with -update to accept):\n%s", golden, firstLineDiff(got, string(want)))
			}
		})
	}
}

// FuzzRenderPartial: any text cut anywhere renders to chunks Telegram
// takes, holding the visible text of the completed Markdown.
func FuzzRenderPartial(f *testing.F) {
	for _, s := range []string{
		"**bold *nested* text** and `code <>&` [link](https://x.org/?a&b) ~~s~~",
		"# H\n\n- a\n  - b\n\n> q **b**\n\n```go\nx := `y`\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |",
		"see [the **docs**](https://exa",
		"***a **b *c `d ~~e _f_",
		"````\n```\n~~~\nx",
		"\\**a\\` `` ` `` b",
	} {
		f.Add(s, uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, md string, cut uint16) {
		if int(cut) < len(md) {
			md = md[:cut]
		}
		completed := CompletePartial(md)
		checkChunks(t, completed, Render(completed), MaxMessageUTF16)
	})
}
