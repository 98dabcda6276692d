package chat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// How the texts the model and the user read give sizes and cut long
// things, the same everywhere.

// ByteSize is n for people: 512 bytes, 12 KB, 3.4 MB — how every note to
// the model and the user gives a size.
func ByteSize(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " bytes"
	case n < 1024*1024:
		return strconv.Itoa((n+512)/1024) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MB"
}

// CapText returns s cut to at most max bytes (on a character boundary)
// with a note saying how much was left out.
func CapText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d more bytes left out]", len(s)-cut)
}

// TailText joins the last lines that fit in max bytes, the newest kept,
// saying how many earlier ones were left out; a last line longer than max
// is cut to its end.
func TailText(lines []string, max int) string {
	size, first := 0, len(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		if size+len(lines[i])+1 > max {
			break
		}
		size += len(lines[i]) + 1
		first = i
	}
	if first == len(lines) && len(lines) > 0 {
		last := lines[len(lines)-1]
		return "…" + strings.ToValidUTF8(last[len(last)-max:], "")
	}
	out := strings.Join(lines[first:], "\n")
	if first > 0 {
		out = fmt.Sprintf("[%d earlier lines left out]\n", first) + out
	}
	return out
}
