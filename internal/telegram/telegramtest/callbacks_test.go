package telegramtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

func TestInlineKeyboardsAndPresses(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: "Yes", CallbackData: "y"}, {Text: "No", CallbackData: "n"}}}}
	m, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 5, Text: "go?", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Sent(5)[0].Keyboard; len(got) != 1 || got[0][1] != (Button{Text: "No", Data: "n"}) {
		t.Fatalf("keyboard %+v", got)
	}
	if _, err := f.Press(5, 7, m.ID, "Maybe"); err == nil {
		t.Error("Press of a button the message lacks did not fail")
	}
	id, err := f.Press(5, 7, m.ID, "No")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: "ok"}); err != nil {
		t.Fatal(err)
	}
	if a, ok := f.Answer(id); !ok || a.Text != "ok" || a.ShowAlert {
		t.Errorf("answer %+v %v", a, ok)
	}
	for _, bad := range []string{id, "cb-never-given"} {
		if _, err := b.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: bad}); !errors.Is(err, tgbot.ErrorBadRequest) {
			t.Errorf("answering %s: %v, want 400 (answered already, or unknown)", bad, err)
		}
	}
	// Editing the text without reply_markup removes the keyboard.
	if _, err := b.EditMessageText(ctx, &tgbot.EditMessageTextParams{ChatID: 5, MessageID: m.ID, Text: "go? → No"}); err != nil {
		t.Fatal(err)
	}
	if got := f.Sent(5)[0].Keyboard; got != nil {
		t.Errorf("keyboard after the edit %+v", got)
	}
	long := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "x", CallbackData: strings.Repeat("d", 65)}}}}
	if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 5, Text: "x", ReplyMarkup: long}); err == nil || !strings.Contains(err.Error(), "BUTTON_DATA_INVALID") {
		t.Errorf("65 bytes of callback data: %v", err)
	}
}

// Telegram sends only the kinds of update the bot asked for.
func TestAllowedUpdates(t *testing.T) {
	f := unlimited(t)
	f.Message(5, 5, "hello")
	f.Callback(5, 5, 1, "x")
	poll := func(allowed string) string {
		resp, err := http.PostForm(f.URL()+"/bot"+f.Token()+"/getUpdates", url.Values{"allowed_updates": {allowed}, "timeout": {"0"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if got := poll(`["message"]`); !strings.Contains(got, `"text":"hello"`) || strings.Contains(got, "callback_query") {
		t.Errorf("getUpdates = %s", got)
	}
	if f.Unconfirmed() != 1 {
		t.Errorf("%d updates kept, want the message only", f.Unconfirmed())
	}
}
