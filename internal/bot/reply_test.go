package bot

import (
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
)

func TestWithReplyContext(t *testing.T) {
	me := models.User{ID: 99, IsBot: true, Username: "volcanic_test_bot"}
	ann := &models.User{ID: 7, FirstName: "Ann"}
	long := strings.Repeat("ж", maxQuote+5)
	for _, tc := range []struct {
		name string
		m    *models.Message
		want string
	}{
		{"no reply", &models.Message{}, "why?"},
		{"reply to the bot", &models.Message{ReplyToMessage: &models.Message{From: &me, Text: "The capital is Paris."}},
			"[Replying to your earlier message: \"The capital is Paris.\"]\nwhy?"},
		{"reply to someone", &models.Message{ReplyToMessage: &models.Message{From: ann, Text: "  look at this  "}},
			"[Replying to a message from Ann: \"look at this\"]\nwhy?"},
		{"a quoted part wins", &models.Message{ReplyToMessage: &models.Message{From: &me, Text: "one. two."},
			Quote: &models.TextQuote{Text: "two."}}, "[Replying to your earlier message: \"two.\"]\nwhy?"},
		{"a photo's caption", &models.Message{ReplyToMessage: &models.Message{From: ann, Caption: "the chart"}},
			"[Replying to a message from Ann: \"the chart\"]\nwhy?"},
		{"nothing to quote", &models.Message{ReplyToMessage: &models.Message{From: ann}}, "why?"},
		{"long", &models.Message{ReplyToMessage: &models.Message{From: ann, Text: long}},
			"[Replying to a message from Ann: \"" + string([]rune(long)[:maxQuote]) + "…\"]\nwhy?"},
	} {
		if got := withReplyContext(tc.m, me, "why?"); got != tc.want {
			t.Errorf("%s: got %q", tc.name, got)
		}
	}
}
