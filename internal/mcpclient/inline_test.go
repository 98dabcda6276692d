package mcpclient

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

func TestInlineLinkedFiles(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	write := func(dir, name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(ws, "browser/page.yml", "- heading \"Hi\" [ref=e1]\n")
	write(ws, "browser/shot.png", "\x89PNG")
	write(ws, "browser/big.txt", strings.Repeat("é", MaxInlineBytes))
	write(outside, "secret.yml", "outside: true\n")
	if err := os.Symlink(filepath.Join(outside, "secret.yml"), filepath.Join(ws, "browser", "link.yml")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, in string
		want     []string
		notWant  []string
	}{
		{"snapshot inlined", "### Snapshot\n- [Snapshot](browser/page.yml)\n### Next",
			[]string{"- [Snapshot](browser/page.yml)\n```yaml\n- heading \"Hi\" [ref=e1]\n```\n### Next"}, nil},
		{"screenshot stays a link", "- [Screenshot](browser/shot.png)", []string{"- [Screenshot](browser/shot.png)"}, []string{"```"}},
		{"outside the workspace", "[x](" + filepath.Join(outside, "secret.yml") + ")", nil, []string{"outside: true"}},
		{"symlink out", "[x](browser/link.yml)", nil, []string{"outside: true"}},
		{"escape", "[x](../" + filepath.Base(outside) + "/secret.yml)", nil, []string{"outside: true"}},
		{"missing", "[x](browser/nope.yml)", []string{"[x](browser/nope.yml)"}, []string{"```"}},
		{"url", "[x](https://example.com/a.yml)", nil, []string{"```"}},
		{"fragment", "- New console entries: [x](browser/page.yml#L1)", []string{"```yaml\n- heading"}, nil},
		{"big capped", "[x](browser/big.txt)", []string{"[file truncated at 50 KB of 100 KB]"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Content: []chat.Part{{Kind: chat.TextPart, Text: tc.in}}}
			inlineLinkedFiles(&r, ws, ws, 1<<20)
			got := r.Content[0].Text
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("has %q:\n%s", w, got)
				}
			}
			if len(got) > len(tc.in)+MaxInlineBytes+200 {
				t.Errorf("grew to %d bytes", len(got))
			}
		})
	}
}

// Inlined files count against the result's cap: a result linking 40 files
// of 42 KB is not a 1.7 MB tool message (it was, when the cap applied
// before inlining).
func TestInlinedFilesCountAgainstTheCap(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	ws := t.TempDir()
	s := h.session(ws)
	if err := os.MkdirAll(filepath.Join(ws, "browser"), 0o700); err != nil {
		t.Fatal(err)
	}
	var links strings.Builder
	for i := range 40 {
		name := filepath.Join("browser", "page-"+strconv.Itoa(i)+".yml")
		if err := os.WriteFile(filepath.Join(ws, name), []byte(strings.Repeat("- row [ref=e1]\n", 42*1024/15)), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&links, "- [Snapshot %d](%s)\n", i, name)
	}
	arg, _ := json.Marshal(map[string]string{"text": links.String()})
	res := h.call(s, h.tool("fake", fakemcp.ToolEcho), string(arg))
	text := res.Text()
	if n := estimateTokens(text); n > DefaultMaxResultTokens+noteTokens {
		t.Errorf("the result is %d tokens, over the cap of %d", n, DefaultMaxResultTokens)
	}
	if !strings.Contains(text, "```yaml\n- row [ref=e1]") {
		t.Errorf("nothing was inlined:\n%.300s", text)
	}
	if !res.Truncated || !strings.Contains(text, "over the limit of 25000 tokens for one tool result") {
		t.Errorf("no note says the result was cut (truncated %v):\n…%s", res.Truncated, text[max(0, len(text)-300):])
	}
}
