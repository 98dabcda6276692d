package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// htmlTags are the tags Telegram's HTML parse mode accepts.
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "tg-emoji": true, "code": true, "pre": true, "blockquote": true,
}

// ValidateHTML checks s the way Telegram's HTML parse mode does (the rules
// of TDLib's parser, simplified): only supported tags, properly nested and
// closed, span only with class="tg-spoiler", a bare '<' is an error, '&'
// starts &lt; &gt; &amp; &quot; or a numeric entity (anything else stays
// literal). It returns the text without markup, entities decoded.
func ValidateHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		c := s[i]
		if c == '&' {
			if r, n := decodeEntity(s[i:]); n > 0 {
				out.WriteRune(r)
				i += n
				continue
			}
			out.WriteByte(c)
			i++
			continue
		}
		if c != '<' {
			out.WriteByte(c)
			i++
			continue
		}
		start := i
		i++
		closing := i < len(s) && s[i] == '/'
		if closing {
			i++
		}
		nameStart := i
		for i < len(s) && (isASCIILetter(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '-') {
			i++
		}
		name := strings.ToLower(s[nameStart:i])
		if name == "" {
			return "", parseError("Empty tag name at byte offset %d", start)
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			return "", parseError("Unclosed start tag at byte offset %d", start)
		}
		attrs := s[i : i+end]
		i += end + 1
		if closing {
			if len(stack) == 0 {
				return "", parseError("Unexpected end tag at byte offset %d", start)
			}
			top := stack[len(stack)-1]
			if top != name {
				return "", parseError("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", start, top, name)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if !htmlTags[name] {
			return "", parseError("Unsupported start tag \"%s\" at byte offset %d", name, start)
		}
		if name == "span" && !strings.Contains(strings.ReplaceAll(attrs, "'", "\""), `class="tg-spoiler"`) {
			return "", parseError("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", start)
		}
		stack = append(stack, name)
	}
	if len(stack) > 0 {
		return "", parseError("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1])
	}
	return out.String(), nil
}

// htmlError is one of Telegram's messages for HTML it cannot parse
// (capitalised as Telegram writes them).
type htmlError string

func (e htmlError) Error() string { return string(e) }

func parseError(format string, args ...any) error { return htmlError(fmt.Sprintf(format, args...)) }

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// decodeEntity decodes the entity at the start of s and returns its
// length, or 0 when s does not start with a supported entity.
func decodeEntity(s string) (rune, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 10 {
		return 0, 0
	}
	name := s[1:semi]
	switch name {
	case "lt":
		return '<', semi + 1
	case "gt":
		return '>', semi + 1
	case "amp":
		return '&', semi + 1
	case "quot":
		return '"', semi + 1
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
			num, base = hex, 16
		}
		v, err := strconv.ParseUint(num, base, 32)
		if err == nil && utf8.ValidRune(rune(v)) && v != 0 {
			return rune(v), semi + 1
		}
	}
	return 0, 0
}
