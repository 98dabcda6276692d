package chat

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1 KB"}, {1535, "1 KB"}, {1536, "2 KB"},
		{1024*1024 - 1, "1024 KB"}, {1024 * 1024, "1.0 MB"}, {3565158, "3.4 MB"},
	} {
		if got := ByteSize(c.n); got != c.want {
			t.Errorf("ByteSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestCapText(t *testing.T) {
	if got := CapText("short", 10); got != "short" {
		t.Errorf("CapText within the cap = %q", got)
	}
	s := strings.Repeat("é", 10) // 20 bytes, 2 each
	got := CapText(s, 5)
	if !strings.HasPrefix(got, "éé…") || !strings.HasSuffix(got, "[16 more bytes left out]") || !utf8.ValidString(got) {
		t.Errorf("CapText cut inside a character: %q", got)
	}
}

func TestTailText(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		max   int
		want  string
	}{
		{"none", nil, 10, ""},
		{"all fit", []string{"a", "b"}, 10, "a\nb"},
		{"the newest kept", []string{"old line", "new"}, 5, "[1 earlier lines left out]\nnew"},
		{"one long line cut to its end", []string{"0123456789"}, 4, "…6789"},
		{"cut on a character", []string{"ééé"}, 3, "…é"},
	} {
		if got := TailText(c.lines, c.max); got != c.want {
			t.Errorf("%s: TailText = %q, want %q", c.name, got, c.want)
		}
	}
}
