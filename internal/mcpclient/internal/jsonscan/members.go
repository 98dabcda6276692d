package jsonscan

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Member is one top-level member of a JSON object: raw[start:end] is
// `"key" : value`, and raw[valStart:end] the value.
type Member struct {
	Key             string
	Start, ValStart int
	End             int
}

// ObjectMembers lists the members of the JSON object in raw, in order.
// ok is false when raw is not a valid JSON object.
func ObjectMembers(raw []byte) (members []Member, ok bool) {
	if !Valid(raw) {
		return nil, false
	}
	// raw is valid JSON from here on, so the scanner can trust its shape.
	i := SkipSpace(raw, 0)
	if raw[i] != '{' {
		return nil, false
	}
	i = SkipSpace(raw, i+1)
	if raw[i] == '}' {
		return nil, true
	}
	for {
		start := i
		keyEnd := SkipString(raw, i)
		name, _ := String(raw[i:keyEnd]) // as encoding/json decodes it
		i = SkipSpace(raw, keyEnd)       // at ':'
		valStart := SkipSpace(raw, i+1)
		end := SkipValue(raw, valStart)
		members = append(members, Member{Key: name, Start: start, ValStart: valStart, End: end})
		i = SkipSpace(raw, end)
		if raw[i] == '}' {
			return members, true
		}
		i = SkipSpace(raw, i+1) // past ','
	}
}

// EachMember calls fn with the raw key (without quotes; escapes left as
// they are) and value of each member of the JSON object obj, which must be
// valid JSON, until fn returns false. It reports false when obj is not an
// object or fn returned false.
func EachMember(obj []byte, fn func(key, val []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = SkipSpace(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		keyEnd := SkipString(obj, i)
		key := obj[i+1 : keyEnd-1]
		i = SkipSpace(obj, keyEnd) // at ':'
		val := SkipSpace(obj, i+1)
		end := SkipValue(obj, val)
		if !fn(key, obj[val:end]) {
			return false
		}
		i = SkipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = SkipSpace(obj, i+1)
		}
	}
	return true
}

// String returns the value of the JSON string literal v, which must be
// valid JSON, as encoding/json decodes it: escapes resolved, and an
// unpaired surrogate escape or a byte of invalid UTF-8 replaced by U+FFFD.
// ok is false when v is not a string.
func String(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	raw := v[1 : len(v)-1]
	i := 0
	for i < len(raw) && raw[i] != '\\' && raw[i] < utf8.RuneSelf {
		i++
	}
	if i == len(raw) || (bytes.IndexByte(raw[i:], '\\') < 0 && utf8.Valid(raw[i:])) {
		return string(raw), true // nothing to resolve or replace
	}
	var b strings.Builder
	b.Grow(len(raw))
	b.Write(raw[:i])
	for i < len(raw) {
		switch c := raw[i]; {
		case c == '\\':
			i = writeEscape(&b, raw, i)
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(raw) && raw[j] != '\\' && raw[j] < utf8.RuneSelf {
				j++
			}
			b.Write(raw[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(raw[i:]) // utf8.RuneError for a bad byte
			b.WriteRune(r)
			i += size
		}
	}
	return b.String(), true
}

// writeEscape writes the escape at raw[i] (a backslash; the escape is
// valid JSON) and returns the index after it. A \u escape of a surrogate
// takes the next \u escape with it when the two make a pair.
func writeEscape(b *strings.Builder, raw []byte, i int) int {
	switch c := raw[i+1]; c {
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r := hexRune(raw[i+2 : i+6])
		i += 6
		if utf16.IsSurrogate(r) {
			if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if pair := utf16.DecodeRune(r, hexRune(raw[i+2:i+6])); pair != utf8.RuneError {
					b.WriteRune(pair)
					return i + 6
				}
			}
			r = utf8.RuneError
		}
		b.WriteRune(r)
		return i
	default: // '"', '\\', '/'
		b.WriteByte(c)
	}
	return i + 2
}

// hexRune reads four hex digits (valid: the JSON was validated); -1 when
// they are not.
func hexRune(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}
