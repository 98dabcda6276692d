package bot

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"
)

// maxQuote bounds the replied-to text put before a message, in runes.
const maxQuote = 1000

// withReplyContext puts what the user replied to — the part they quoted,
// or the whole message — before text, so that the model knows what "this"
// refers to. Text is returned as it is when the message replies to
// nothing with text.
func withReplyContext(m *models.Message, me models.User, text string) string {
	r := m.ReplyToMessage
	var quoted string
	switch {
	case m.Quote != nil && m.Quote.Text != "":
		quoted = m.Quote.Text
	case r != nil:
		quoted = cmp.Or(r.Text, r.Caption)
	}
	quoted = strings.TrimSpace(quoted)
	if quoted == "" {
		return text
	}
	if utf8.RuneCountInString(quoted) > maxQuote {
		quoted = string([]rune(quoted)[:maxQuote]) + "…"
	}
	whose := "an earlier message"
	switch {
	case r != nil && r.From != nil && me.ID != 0 && r.From.ID == me.ID:
		whose = "your earlier message"
	case r != nil && r.From != nil && r.From.FirstName != "":
		whose = "a message from " + r.From.FirstName
	}
	return "[Replying to " + whose + ": \"" + quoted + "\"]\n" + text
}

// errText is err's text for a log line, scrubbed.
func errText(scrub func(string) string, err error) string {
	if err == nil {
		return ""
	}
	return scrub(err.Error())
}
