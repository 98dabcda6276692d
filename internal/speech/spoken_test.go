package speech

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSpoken(t *testing.T) {
	cases := []struct{ name, md, want string }{
		{"prose", "Hello **there**, *friend*.", "Hello there, friend."},
		{"code block left out", "Run this:\n\n```sh\nrm -rf /tmp/x\n```\n\nThen wait.", "Run this:\n\nThen wait."},
		{"indented code left out", "See:\n\n    x := 1\n\nDone.", "See:\n\nDone."},
		{"table left out", "Prices:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThat is all.", "Prices:\n\nThat is all."},
		{"link: its words only", "Read [the spec](https://go.dev/ref/spec) first.", "Read the spec first."},
		{"bare URL left out", "See https://example.com/a?b=c for more.", "See for more."},
		{"list items", "Steps:\n\n- one\n- two", "Steps:\n\none\n\ntwo"},
		{"heading", "# Title\n\nBody.", "Title\n\nBody."},
		{"inline code kept", "Use `go test` now.", "Use go test now."},
		{"only code", "```\nx\n```", ""},
		{"quote", "> quoted words", "quoted words"},
		{"soft breaks", "one\ntwo", "one two"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Spoken(tc.md); got != tc.want {
				t.Errorf("Spoken(%q) = %q, want %q", tc.md, got, tc.want)
			}
		})
	}
}

func TestParts(t *testing.T) {
	sentence := "This is a sentence of some length. "
	long := strings.Repeat(sentence, 300) // 10,500 characters
	cases := []struct {
		name     string
		text     string
		limit    int
		maxParts int
		parts    int
		rest     bool
	}{
		{"short", "Hello.", 100, 3, 1, false},
		{"three parts", long, 4096, 3, 3, false},
		{"cut at two", long, 4096, 2, 2, true},
		{"no limit on parts", long, 1000, 0, 11, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := Parts(tc.text, tc.limit, tc.maxParts)
			if len(parts) != tc.parts {
				t.Fatalf("%d parts, want %d", len(parts), tc.parts)
			}
			for i, p := range parts {
				if n := utf8.RuneCountInString(p); n > tc.limit {
					t.Errorf("part %d has %d characters, over %d", i+1, n, tc.limit)
				}
				if i < len(parts)-1 && !strings.HasSuffix(p, ".") {
					t.Errorf("part %d does not end at a sentence: %q", i+1, p[len(p)-20:])
				}
			}
			last := parts[len(parts)-1]
			if got := strings.HasSuffix(last, "The rest is in the written answer."); got != tc.rest {
				t.Errorf("the last part says the rest is written: %v, want %v", got, tc.rest)
			}
			if !tc.rest && strings.Join(strings.Fields(strings.Join(parts, " ")), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Error("the parts do not hold the whole text")
			}
		})
	}
}

// Parts never loses or reorders words, and keeps every part within the
// limit, whatever the text.
func FuzzParts(f *testing.F) {
	f.Add("Hello. World! How are you?\n\nFine.", 10)
	f.Add(strings.Repeat("ünïcödé ", 50), 37)
	f.Add("averyveryverylongwordwithoutanyspaceatall", 5)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || limit < 40 || limit > 5000 {
			t.Skip()
		}
		parts := Parts(text, limit, 0)
		for _, p := range parts {
			if utf8.RuneCountInString(p) > limit {
				t.Fatalf("a part of %d characters, over %d", utf8.RuneCountInString(p), limit)
			}
		}
		if strings.Join(parts, "") != strings.Join(strings.Fields(text), "") && strings.Join(strings.Fields(strings.Join(parts, " ")), " ") != strings.Join(strings.Fields(text), " ") {
			t.Fatalf("words lost or moved: %q → %q", text, parts)
		}
	})
}
