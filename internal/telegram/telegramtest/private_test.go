package telegramtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// A user who never started the bot, or blocked it, refuses its sends to
// their private chat with Telegram's 403 until they write to it; others
// and groups are not affected.
func TestNotStartedAndBlocked(t *testing.T) {
	cases := []struct {
		name   string
		refuse func(f *Fake, user int64)
		why    string
	}{
		{"never started", func(f *Fake, u int64) { f.NotStarted(u) }, "bot can't initiate conversation with a user"},
		{"blocked", func(f *Fake, u int64) { f.Blocked(u) }, "bot was blocked by the user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := unlimited(t)
			b := client(t, f)
			ctx := context.Background()
			c.refuse(f, 7)
			send := func(chat int64) error {
				_, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: chat, Text: "hi"})
				return err
			}
			if err := send(7); !errors.Is(err, tgbot.ErrorForbidden) || !strings.Contains(err.Error(), c.why) {
				t.Errorf("a send to the user: %v, want 403 %q", err, c.why)
			}
			if _, err := b.SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: 7, Action: models.ChatActionTyping}); !errors.Is(err, tgbot.ErrorForbidden) {
				t.Errorf("typing to the user: %v, want 403", err)
			}
			for _, other := range []int64{8, -100123} {
				if err := send(other); err != nil {
					t.Errorf("a send to %d: %v", other, err)
				}
			}
			f.Message(-100123, 7, "in a group") // not the private chat: still refused
			if err := send(7); !errors.Is(err, tgbot.ErrorForbidden) {
				t.Errorf("after a group message, a send to the user: %v, want 403", err)
			}
			f.Message(7, 7, "/start")
			if err := send(7); err != nil {
				t.Errorf("after /start, a send to the user: %v", err)
			}
		})
	}
}

// Telegram takes web_app buttons in private chats only.
func TestWebAppButtonsOnlyInPrivateChats(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: "Open", WebApp: &models.WebAppInfo{URL: "https://example.com/app"}}}}}
	if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 5, Text: "app", ReplyMarkup: kb}); err != nil {
		t.Fatalf("a web_app button in a private chat: %v", err)
	}
	if got := f.Sent(5)[0].Keyboard[0][0]; got != (Button{Text: "Open", URL: "https://example.com/app", WebApp: true}) {
		t.Errorf("button %+v", got)
	}
	for _, chat := range []int64{-5, -1001234567890} {
		if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: chat, Text: "app", ReplyMarkup: kb}); err == nil || !strings.Contains(err.Error(), "BUTTON_TYPE_INVALID") {
			t.Errorf("a web_app button in chat %d: %v, want BUTTON_TYPE_INVALID", chat, err)
		}
	}
	m, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: -5, Text: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EditMessageReplyMarkup(ctx, &tgbot.EditMessageReplyMarkupParams{ChatID: -5, MessageID: m.ID, ReplyMarkup: kb}); err == nil {
		t.Error("a web_app button edited into a group's message was taken")
	}
}
