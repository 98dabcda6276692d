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

func TestByteOffset(t *testing.T) {
	const s = "a😀é日b" // bytes 0, 1–4, 5–6, 7–9, 10; UTF-16 units 0, 1–2, 3, 4, 5
	tests := []struct{ off, want int }{
		{-1 << 62, 0}, {-1, 0}, {0, 0}, {1, 1},
		{2, 5}, // inside the surrogate pair: the end of the emoji
		{3, 5}, {4, 7}, {5, 10}, {6, 11}, {7, 11}, {1 << 62, 11},
	}
	for _, tt := range tests {
		if got := ByteOffset(s, tt.off); got != tt.want {
			t.Errorf("ByteOffset(%q, %d) = %d, want %d", s, tt.off, got, tt.want)
		}
	}
	if got := ByteOffset("", 3); got != 0 {
		t.Errorf("ByteOffset(\"\", 3) = %d", got)
	}
}

// FuzzByteOffset checks ByteOffset against the obvious search: the first character boundary whose prefix is at
// least off units long, counted by unicode/utf16.
func FuzzByteOffset(f *testing.F) {
	for _, s := range []string{"", "ascii", "a😀é日b", "👨\u200d👩\u200d👧 @bot hi", "\xff\x80ab\xf0"} {
		for _, off := range []int{-1, 0, 1, 2, 3, 7, 100} {
			f.Add(s, off)
		}
	}
	f.Fuzz(func(t *testing.T, s string, off int) {
		got := ByteOffset(s, off)
		if got < 0 || got > len(s) {
			t.Fatalf("ByteOffset(%q, %d) = %d, outside the text", s, off, got)
		}
		if !utf8.ValidString(s) {
			return
		}
		want := len(s)
		for i := range s {
			if len(utf16.Encode([]rune(s[:i]))) >= off {
				want = i
				break
			}
		}
		if got != want {
			t.Fatalf("ByteOffset(%q, %d) = %d, want %d", s, off, got, want)
		}
	})
}
