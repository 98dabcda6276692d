package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"big capped", "[x](browser/big.txt)", []string{"[file truncated at 50 KB]"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Content: []Content{{Type: ContentText, Text: tc.in}}}
			inlineLinkedFiles(&r, ws, ws)
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
