package tgformat

import (
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello", 5},
		{"é", 1},               // two bytes
		{"日本", 2},              // three bytes each
		{"😀", 2},               // four bytes: a surrogate pair
		{"👨\u200d👩\u200d👧", 8}, // 2 + 1 + 2 + 1 + 2
		{"e\u0301", 2},
		{"Ⱥ İ", 3},
	}
	for _, tt := range tests {
		if got := UTF16Len(tt.in); got != tt.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.want)
		}
		if got := UTF16Len([]byte(tt.in)); got != tt.want {
			t.Errorf("UTF16Len([]byte(%q)) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzUTF16Len checks the byte-wise count against unicode/utf16's encoding of valid UTF-8.
func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "ascii", "é日本😀", "👨\u200d👩\u200d👧 🇫🇷", "\U0010FFFF\uFFFF\u0800\u07FF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := UTF16Len(s)
		if !utf8.ValidString(s) {
			return // the count is the package's own; nothing to compare with
		}
		if want := len(utf16.Encode([]rune(s))); got != want {
			t.Fatalf("UTF16Len(%q) = %d, unicode/utf16 says %d", s, got, want)
		}
	})
}
