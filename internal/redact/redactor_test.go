package redact

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"
)

// naiveRedact is the reference: leftmost-longest, non-overlapping, written
// the obvious way. It also returns where the placeholders are in its output.
func naiveRedact(s string, secrets []string) (string, [][2]int) {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(x, y string) int { return cmp.Compare(len(y), len(x)) })
	var out strings.Builder
	var marks [][2]int
	for i := 0; i < len(s); {
		matched := false
		for _, sec := range sorted {
			if sec != "" && strings.HasPrefix(s[i:], sec) {
				marks = append(marks, [2]int{out.Len(), out.Len() + len(Placeholder)})
				out.WriteString(Placeholder)
				i += len(sec)
				matched = true
				break
			}
		}
		if !matched {
			out.WriteByte(s[i])
			i++
		}
	}
	return out.String(), marks
}

func TestRedactor(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"no secrets", nil, "hello abcdefgh", "hello abcdefgh"},
		{"empty input", []string{"abcdefgh"}, "", ""},
		{"input shorter than secret", []string{"abcdefgh"}, "abc", "abc"},
		{"whole input", []string{"abcdefgh"}, "abcdefgh", "[REDACTED]"},
		{"start", []string{"abcdefgh"}, "abcdefgh tail", "[REDACTED] tail"},
		{"end", []string{"abcdefgh"}, "head abcdefgh", "head [REDACTED]"},
		{"repeated", []string{"abcdefgh"}, "abcdefgh abcdefgh", "[REDACTED] [REDACTED]"},
		{"adjacent", []string{"abcdefgh"}, "abcdefghabcdefgh", "[REDACTED][REDACTED]"},
		{"adjacent different", []string{"abcdefgh", "12345678"}, "12345678abcdefgh12345678", "[REDACTED][REDACTED][REDACTED]"},
		{"near miss", []string{"abcdefgh"}, "abcdefgX abcdefg", "abcdefgX abcdefg"},
		{"prefix secrets, longer wins", []string{"abcdefgh", "abcdefghij"}, "xabcdefghijx", "x[REDACTED]x"},
		{"prefix secrets, shorter when longer absent", []string{"abcdefgh", "abcdefghij"}, "xabcdefghix", "x[REDACTED]ix"},
		{"suffix secrets", []string{"efghijkl", "abcdefghijkl"}, "abcdefghijkl efghijkl", "[REDACTED] [REDACTED]"},
		{"nested secret inside longer", []string{"cdefghij", "abcdefghijkl"}, "abcdefghijkl", "[REDACTED]"},
		{"nested secret alone", []string{"cdefghij", "abcdefghijkl"}, "abcdefghijk", "ab[REDACTED]k"},
		{"overlap, leftmost wins", []string{"aaaabbbb", "bbbbcccc"}, "aaaabbbbcccc", "[REDACTED]cccc"},
		{"overlap, leftmost wins even if shorter", []string{"xxaaaabb", "aaaabbbbbbbbbbbb"}, "xxaaaabbbbbbbbbbbb", "[REDACTED]bbbbbbbbbb"},
		{"self-overlapping", []string{"aaaaaaaa"}, strings.Repeat("a", 20), "[REDACTED][REDACTED]aaaa"},
		{"regexp metacharacters", []string{`a.b*c+?(x)[y]{2}|^$\d`}, `pre a.b*c+?(x)[y]{2}|^$\d post aXbbc`, "pre [REDACTED] post aXbbc"},
		{"unicode secret", []string{"пароль-секрет"}, "мой пароль-секрет тут", "мой [REDACTED] тут"},
		{"emoji", []string{"🔑🔑🔑🔑🔑🔑🔑🔑"}, "key: 🔑🔑🔑🔑🔑🔑🔑🔑!", "key: [REDACTED]!"},
		{"short secrets are allowed here", []string{"a", "bc"}, "abcab", "[REDACTED][REDACTED][REDACTED]b"},
		{"one-byte secret", []string{"x"}, "xyx", "[REDACTED]y[REDACTED]"},
		{"empty secret ignored", []string{"", "abcdefgh"}, "abcdefgh", "[REDACTED]"},
		{"duplicates", []string{"abcdefgh", "abcdefgh"}, "abcdefgh", "[REDACTED]"},
		{"secret containing placeholder", []string{"[REDACTED]"}, "a [REDACTED] b", "a [REDACTED] b"},
		{"long window", []string{strings.Repeat("k", 300)}, "<" + strings.Repeat("k", 301) + ">", "<[REDACTED]k>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRedactor(tt.secrets)
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := string(r.RedactBytes([]byte(tt.in))); got != tt.want {
				t.Errorf("RedactBytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if ref, _ := naiveRedact(tt.in, tt.secrets); ref != tt.want {
				t.Errorf("reference(%q) = %q, want %q (bad test case)", tt.in, ref, tt.want)
			}
		})
	}
}

func TestRedactorNil(t *testing.T) {
	var r *Redactor
	if got := r.Redact("abcdefgh"); got != "abcdefgh" {
		t.Errorf("nil Redactor: got %q", got)
	}
	if got := r.RedactBytes([]byte("abcdefgh")); string(got) != "abcdefgh" {
		t.Errorf("nil Redactor: got %q", got)
	}
}

func TestRedactorNoMatchDoesNotAllocate(t *testing.T) {
	r := NewRedactor([]string{"ghp_0123456789abcdef", "sk-proj-abcdefghijkl", "hunter2hunter2"})
	s := strings.Repeat("nothing secret in this line, just text 0123456789\n", 100)
	b := []byte(s)
	if n := testing.AllocsPerRun(100, func() { _ = r.Redact(s) }); n != 0 {
		t.Errorf("Redact allocated %v times on a clean input", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.RedactBytes(b) }); n != 0 {
		t.Errorf("RedactBytes allocated %v times on a clean input", n)
	}
	if got := r.RedactBytes(b); &got[0] != &b[0] {
		t.Error("RedactBytes on a clean input did not return its argument")
	}
}

func TestRedactBytesLeavesInputAlone(t *testing.T) {
	r := NewRedactor([]string{"abcdefgh"})
	in := []byte("x abcdefgh y")
	orig := bytes.Clone(in)
	got := r.RedactBytes(in)
	if string(got) != "x [REDACTED] y" || !bytes.Equal(in, orig) {
		t.Errorf("got %q, input now %q", got, in)
	}
}

// FuzzRedact checks Redact against the reference implementation of the same
// leftmost-longest semantics, and the property that follows from it: no secret
// survives whole in the text between placeholders, so every occurrence of a
// secret in the output overlaps a placeholder (a secret can only reappear
// when it shares characters with "[REDACTED]", such as "D]xyz" after a
// redacted secret followed by "xyz").
func FuzzRedact(f *testing.F) {
	f.Add("prefix abcdefghij suffix abcdefgh", "abcdefgh", "abcdefghij", "")
	f.Add("aaaabbbbcccc", "aaaabbbb", "bbbbcccc", "cccc")
	f.Add("aaaaaaaaaaaaaaaaaaaaa", "aaaaaaaa", "aaa", "a")
	f.Add("мой пароль-секрет тут 🔑🔑", "пароль-секрет", "🔑", "секрет")
	f.Add("x[REDACTED]D]abcdefgh", "D]abcdefgh", "[REDACTED]", "REDACTED")
	f.Add(`re a.b*c+?(x) ^$ \d`, `a.b*c+?(x)`, `^$`, `\d`)
	f.Add("", "abc", "", "")
	f.Fuzz(func(t *testing.T, text, s1, s2, s3 string) {
		var secrets []string
		for _, s := range []string{s1, s2, s3} {
			if s != "" {
				secrets = append(secrets, s)
			}
		}
		r := NewRedactor(secrets)
		// Also try the text with the secrets planted in it, so that
		// matches are frequent whatever the fuzzer generates.
		planted := text + s1 + text + s2 + s1 + s3 + text
		for _, in := range []string{text, planted} {
			want, marks := naiveRedact(in, secrets)
			got := r.Redact(in)
			if got != want {
				t.Fatalf("Redact(%q) with %q = %q, reference %q", in, secrets, got, want)
			}
			if gotB := r.RedactBytes([]byte(in)); string(gotB) != want {
				t.Fatalf("RedactBytes(%q) with %q = %q, reference %q", in, secrets, gotB, want)
			}
			for _, sec := range secrets {
				for off := 0; ; {
					i := strings.Index(got[off:], sec)
					if i < 0 {
						break
					}
					start, end := off+i, off+i+len(sec)
					if !slices.ContainsFunc(marks, func(m [2]int) bool { return start < m[1] && m[0] < end }) {
						t.Fatalf("secret %q survives at %d in %q (input %q)", sec, start, got, in)
					}
					off = start + 1
				}
			}
		}
	})
}
