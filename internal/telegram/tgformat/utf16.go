package tgformat

// Telegram's limits on the visible text of a message and of a media caption, in UTF-16 code units, counted after
// entity parsing (the text, not the HTML that carries it).
const (
	MaxMessageUTF16 = 4096
	MaxCaptionUTF16 = 1024
)

// UTF16Len is the length of s in UTF-16 code units, the unit of Telegram's length limits and of message entities'
// offsets: one for each character of the Basic Multilingual Plane, two for each other one (most emoji). s is UTF-8,
// as a string or a byte slice. Only a character's first byte counts, so the length is exact for valid UTF-8; for
// anything else it is the length every function of this package counts with, so their limits hold all the same.
func UTF16Len[T ~string | ~[]byte](s T) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += byteUnits(s[i])
	}
	return n
}

// ByteOffset converts off, an offset into s in UTF-16 code units (a message entity's Offset, or its Offset plus
// Length), into a byte offset into s. It accepts any off, as a client may send anything: an offset at or below 0
// is 0, one at or past the end is len(s), and one that falls inside a character (between the halves of a
// surrogate pair) moves to the end of that character, so the result is always a character boundary.
func ByteOffset(s string, off int) int {
	if off <= 0 {
		return 0
	}
	u := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if u >= off && !isContinuation(c) {
			return i
		}
		u += byteUnits(c)
	}
	return len(s)
}

// byteUnits is what one byte of UTF-8 adds to the UTF-16 length: a character's first byte counts for its units
// (two for the four-byte sequences beyond the Basic Multilingual Plane), continuation bytes for nothing.
func byteUnits(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case isContinuation(c):
		return 0
	case c < 0xF0:
		return 1
	default:
		return 2
	}
}

// isContinuation reports whether c continues a UTF-8 sequence rather than starting a character.
func isContinuation(c byte) bool { return c&0xC0 == 0x80 }
