package oauth

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDescription caps what an error quotes of what a server sent (an
// error_description, an iss, a page's text).
const maxDescription = 200

// redacted stands in for a secret in an error's text.
const redacted = "[REDACTED]"

// oneLine is s on one line — control characters and runs of white space
// as one space — cut to at most max bytes (on a character boundary, with
// "…").
func oneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if len(out) <= max {
		return out
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut] + "…"
}

// minSecret is the shortest value scrub replaces: a shorter one would
// mangle the text around it, and is no secret worth the name.
const minSecret = 6

// scrub replaces each secret in s, as written or URL-encoded, with
// [REDACTED].
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) < minSecret {
			continue
		}
		s = strings.ReplaceAll(s, sec, redacted)
		if q := url.QueryEscape(sec); q != sec {
			s = strings.ReplaceAll(s, q, redacted)
		}
	}
	return s
}

// quoted is what a server sent, fit to quote in an error: its secrets
// scrubbed, on one line, cut.
func quoted(s string, secrets ...string) string {
	return oneLine(scrub(s, secrets...), maxDescription)
}
