package jsonscan

import (
	"bytes"
	"encoding/json"
)

// AppendString appends s as a JSON string, by hand when it needs no
// escaping.
func AppendString(b []byte, s string) []byte {
	if plainName(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	enc, _ := json.Marshal(s) // a string always encodes
	return append(b, enc...)
}

// plainName reports whether s can be written as a JSON string as it is:
// printable ASCII without quotes, backslashes or the characters
// encoding/json escapes for HTML.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// AppendCompact appends JSON without newlines (a line is one message).
func AppendCompact(dst, src []byte) []byte {
	if bytes.IndexByte(src, '\n') < 0 && bytes.IndexByte(src, '\r') < 0 {
		return append(dst, src...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, src); err != nil {
		return append(dst, src...)
	}
	return append(dst, buf.Bytes()...)
}
