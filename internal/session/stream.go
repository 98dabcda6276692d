package session

import (
	"strings"
	"time"
	"unicode"
)

// streamEvery is how often at most a step's text goes to the chat while it
// streams (the chat itself updates a message at most once a second; this
// only spares redacting the whole text for every piece).
const streamEvery = 250 * time.Millisecond

// answerStream hands one model step's text to the chat as it streams. The
// chat sees it redacted and cut after its last whitespace: a secret is
// shown only whole, so the redactor can replace it (a secret that holds
// whitespace may show a part of itself before the rest arrives).
type answerStream struct {
	to     StreamingActivity
	redact func(string) string

	text  strings.Builder
	last  time.Time // of the last Stream
	shown bool      // Stream was called with some text
}

// add is the request's OnText.
func (a *answerStream) add(piece string) {
	a.text.WriteString(piece)
	if time.Since(a.last) < streamEvery {
		return
	}
	if show := wholeWords(a.text.String()); show != "" {
		a.last = time.Now()
		a.shown = true
		a.to.Stream(a.redact(show))
	}
}

// flush shows what the stream brought (it ended early), up to its last
// whitespace as always, and returns it.
func (a *answerStream) flush() string {
	s := a.redact(wholeWords(a.text.String()))
	if s != "" {
		a.shown = true
		a.to.Stream(s)
	}
	return s
}

// wholeWords is s up to its last whitespace, trailing whitespace dropped.
func wholeWords(s string) string {
	cut := strings.LastIndexFunc(s, unicode.IsSpace)
	if cut <= 0 {
		return ""
	}
	return strings.TrimRightFunc(s[:cut], unicode.IsSpace)
}
