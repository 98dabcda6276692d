package tgformat

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestCutPlain(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"fits", "hello", 10, []string{"hello"}},
		{"empty", "", 10, nil},
		{"blank", " \n\t\n ", 10, nil},
		{"at a line break", "first line\nsecond line", 15, []string{"first line", "second line"}},
		{"at a space", "lorem ipsum dolor", 12, []string{"lorem ipsum", "dolor"}},
		{"line break in the first half is no cut", "ab\ncdefghij klm", 12, []string{"ab\ncdefghij", "klm"}},
		{"anywhere without spaces", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"indentation after a cut is kept", "line one\n  line two", 10, []string{"line one", "  line two"}},
		{"emoji count two", "😀😀😀", 4, []string{"😀😀", "😀"}},
		{"emoji never halved", "😀😀😀", 3, []string{"😀", "😀", "😀"}},
		{"limit below two holds any character", "😀a", 0, []string{"😀", "a"}},
		{"blank rest dropped", "aaaa\n    ", 5, []string{"aaaa"}},
		{"blank part dropped", "aaaa\n\t\t\t\t\t\nbbbb", 5, []string{"aaaa", "bbbb"}},
		{"invalid UTF-8 at the cut", "ab\xffc", 3, []string{"ab", "\xffc"}},
		{"telegram's limit", strings.Repeat("word ", 1000), MaxMessageUTF16, []string{
			strings.TrimSpace(strings.Repeat("word ", 819)), strings.Repeat("word ", 181),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutPlain(tt.in, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("CutPlain(%q, %d)\n got: %q\nwant: %q", tt.in, tt.limit, got, tt.want)
			}
			checkPlainParts(t, tt.in, tt.limit, got)
		})
	}
}

func TestPreChunks(t *testing.T) {
	in := "server  state\n" + strings.Repeat("fetch   <ok> & ready\n", 400)
	chunks := PreChunks(in)
	if len(chunks) != 3 {
		t.Fatalf("%d chunks, want 3", len(chunks))
	}
	var texts []string
	for i, c := range chunks {
		if err := checkChunk(c, MaxMessageUTF16); err != nil {
			t.Errorf("chunk %d: %v", i, err)
		}
		if !strings.HasPrefix(c.HTML, "<pre>") || !strings.Contains(c.HTML, "&lt;ok&gt; &amp; ready") {
			t.Errorf("chunk %d HTML %.40q…", i, c.HTML)
		}
		texts = append(texts, c.Text)
	}
	if got := strings.Join(texts, "\n"); got != in {
		t.Error("the chunks' texts do not add up to the input")
	}
	if PreChunks(" \n") != nil {
		t.Error("blank text gave chunks")
	}
}

// FuzzCutPlain checks CutPlain against a naive reference written over characters and counted by unicode/utf16,
// and its invariants on any input: every part within the limit and not blank, the parts in order losing nothing
// but whitespace at the cuts, valid UTF-8 kept valid.
func FuzzCutPlain(f *testing.F) {
	for _, s := range []string{
		"first line\nsecond line",
		"lorem ipsum dolor sit amet, consectetur adipiscing elit",
		"😀😀 👨\u200d👩\u200d👧 e\u0301 日本語のテキスト",
		"a\n\n\n\nb     c\t\td",
		"aaaa\n    ",
		"ab\xffc\x80\xf0\x9f",
		strings.Repeat("x", 300),
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, s string, limit uint8) {
		parts := CutPlain(s, int(limit))
		checkPlainParts(t, s, int(limit), parts)
		if utf8.ValidString(s) {
			if want := cutPlainRef(s, int(limit)); !slices.Equal(parts, want) {
				t.Fatalf("CutPlain(%q, %d)\n got: %q\nwant: %q", s, limit, parts, want)
			}
		}
	})
}

// checkPlainParts checks CutPlain's invariants.
func checkPlainParts(t *testing.T, s string, limit int, parts []string) {
	t.Helper()
	limit = max(limit, 2)
	pos := 0
	for i, p := range parts {
		if n := UTF16Len(p); n > limit {
			t.Fatalf("part %d is %d UTF-16 units, limit %d: %q", i, n, limit, p)
		}
		if strings.TrimSpace(p) == "" {
			t.Fatalf("part %d is blank: %q", i, p)
		}
		if utf8.ValidString(s) {
			if !utf8.ValidString(p) {
				t.Fatalf("part %d is not valid UTF-8: %q", i, p)
			}
			if n := len(utf16.Encode([]rune(p))); n != UTF16Len(p) {
				t.Fatalf("part %d: UTF16Len %d, unicode/utf16 %d", i, UTF16Len(p), n)
			}
		}
		idx := strings.Index(s[pos:], p)
		if idx < 0 {
			t.Fatalf("part %d %q is not next in the text %q", i, p, s[pos:])
		}
		if gap := s[pos : pos+idx]; strings.TrimSpace(gap) != "" {
			t.Fatalf("%q lost before part %d", gap, i)
		}
		pos += idx + len(p)
	}
	if rest := s[pos:]; strings.TrimSpace(rest) != "" {
		t.Fatalf("%q lost after the last part", rest)
	}
}

// cutPlainRef is CutPlain the slow way: over characters, each prefix measured again by unicode/utf16.
func cutPlainRef(s string, limit int) []string {
	limit = max(limit, 2)
	units := func(rs []rune) int { return len(utf16.Encode(rs)) }
	var parts []string
	keep := func(p string) {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	for s != "" {
		rs := []rune(s)
		if units(rs) <= limit {
			keep(s)
			break
		}
		n := 0
		for n < len(rs) && units(rs[:n+1]) <= limit {
			n++
		}
		end := len(string(rs[:n]))
		cut := end
		if i := strings.LastIndex(s[:end], "\n"); i > end/2 {
			cut = i + 1
		} else if i := strings.LastIndex(s[:end], " "); i > end/2 {
			cut = i + 1
		}
		keep(strings.TrimRight(s[:cut], "\n "))
		s = strings.TrimLeft(s[cut:], "\n")
	}
	return parts
}

// A long text is cut in linear time: 20 MB took 38 s of CPU for the first
// part when every part recounted the rest.
func BenchmarkCutPlain20MB(b *testing.B) {
	s := strings.Repeat(strings.Repeat("stderr line of a chatty server ", 30)+"\n", 20<<20/931)
	for b.Loop() {
		CutPlain(s, MaxMessageUTF16)
	}
}
