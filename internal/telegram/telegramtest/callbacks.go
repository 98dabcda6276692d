package telegramtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"
)

// Button is one inline keyboard button of a message the bot sent.
type Button struct {
	Text string
	Data string // callback_data
	URL  string // url, or web_app's url when WebApp
	// WebApp: the button opens URL as a Mini App (web_app).
	WebApp bool
}

// CallbackAnswer is the bot's answerCallbackQuery to a press.
type CallbackAnswer struct {
	Text      string
	ShowAlert bool
}

// maxCallbackData is Telegram's limit on a button's callback_data, in
// bytes.
const maxCallbackData = 64

// parseKeyboard reads a reply_markup parameter of a message in chat: nil
// when absent, the rows of its inline keyboard otherwise, checked as
// Telegram checks them (web_app buttons only in private chats).
func parseKeyboard(raw string, chat int64) ([][]Button, error) {
	if raw == "" {
		return nil, nil
	}
	var m struct {
		InlineKeyboard [][]models.InlineKeyboardButton `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	rows := [][]Button{}
	for _, row := range m.InlineKeyboard {
		var out []Button
		for _, b := range row {
			switch {
			case b.Text == "":
				return nil, badRequest("text buttons are unallowed in the inline keyboard")
			case b.CallbackData == "" && b.URL == "" && (b.WebApp == nil || b.WebApp.URL == ""):
				return nil, badRequest("BUTTON_TYPE_INVALID")
			case len(b.CallbackData) > maxCallbackData:
				return nil, badRequest("BUTTON_DATA_INVALID")
			case b.WebApp != nil && chat <= 0:
				return nil, badRequest("BUTTON_TYPE_INVALID")
			}
			nb := Button{Text: b.Text, Data: b.CallbackData, URL: b.URL}
			if b.WebApp != nil {
				nb.URL, nb.WebApp = b.WebApp.URL, true
			}
			out = append(out, nb)
		}
		rows = append(rows, out)
	}
	return rows, nil
}

// Press queues a callback_query update: user pressing the button labelled
// label on message msgID of chat, as Telegram sends it. It fails the way
// a test should when there is no such button. It returns the callback
// query's id.
func (f *Fake) Press(chat, user int64, msgID int, label string) (string, error) {
	f.mu.Lock()
	m := f.findLocked(chat, msgID)
	var data string
	found := false
	if m != nil {
		for _, row := range m.Keyboard {
			for _, b := range row {
				if b.Text == label {
					data, found = b.Data, true
				}
			}
		}
	}
	f.mu.Unlock()
	if !found {
		return "", fmt.Errorf("telegramtest: message %d in chat %d has no button %q", msgID, chat, label)
	}
	return f.Callback(chat, user, msgID, data), nil
}

// Callback queues a callback_query with any data for message msgID of
// chat (which need not exist, nor carry such a button): a forged or
// replayed press. It returns the callback query's id.
func (f *Fake) Callback(chat, user int64, msgID int, data string) string {
	id, msg := f.newCallback(chat, msgID)
	from := models.User{ID: user, FirstName: "User " + strconv.FormatInt(user, 10), Username: "user" + strconv.FormatInt(user, 10)}
	f.Send(models.Update{CallbackQuery: &models.CallbackQuery{
		ID: id, From: from, Data: data, ChatInstance: "ci" + strconv.FormatInt(chat, 10),
		Message: models.MaybeInaccessibleMessage{Type: models.MaybeInaccessibleMessageTypeMessage, Message: msg},
	}})
	return id
}

// newCallback gives out a callback query id, and the message the press
// is on as Telegram shows it.
func (f *Fake) newCallback(chat int64, msgID int) (string, *models.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.callbackSeq++
	id := "cb" + strconv.Itoa(f.callbackSeq)
	f.callbacks[id] = nil // pressed, not answered yet
	if m := f.findLocked(chat, msgID); m != nil {
		return id, f.wireLocked(m)
	}
	return id, &models.Message{ID: msgID, Chat: chatOf(chat), Date: int(time.Now().Unix())}
}

// answerCallbackQuery answers a press once, as Telegram allows.
func (f *Fake) answerCallbackQuery(p map[string]string) (any, error) {
	id := p["callback_query_id"]
	f.mu.Lock()
	defer f.mu.Unlock()
	a, pressed := f.callbacks[id]
	if !pressed || a != nil {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	f.callbacks[id] = &CallbackAnswer{Text: p["text"], ShowAlert: p["show_alert"] == "true"}
	f.notifyLocked()
	return true, nil
}

// Answer returns the bot's answer to callback query id, false while there
// is none.
func (f *Fake) Answer(id string) (CallbackAnswer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.callbacks[id]
	if a == nil {
		return CallbackAnswer{}, false
	}
	return *a, true
}

// WaitAnswer waits until the bot answered callback query id.
func (f *Fake) WaitAnswer(id string, timeout time.Duration) (CallbackAnswer, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		a, ch := f.callbacks[id], f.changed
		f.mu.Unlock()
		if a != nil {
			return *a, nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return CallbackAnswer{}, fmt.Errorf("telegramtest: callback query %s not answered after %v", id, timeout)
		case <-f.closed:
			return CallbackAnswer{}, fmt.Errorf("telegramtest: closed before callback query %s was answered", id)
		}
	}
}

// editMessageReplyMarkup replaces (or, without reply_markup, removes) a
// message's inline keyboard.
func (f *Fake) editMessageReplyMarkup(p map[string]string) (any, error) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	kb, err := parseKeyboard(p["reply_markup"], chat)
	if err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(p["message_id"])
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.findLocked(chat, id)
	switch {
	case m == nil || m.Deleted:
		return nil, badRequest("message to edit not found")
	case keyboardsEqual(m.Keyboard, kb):
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Keyboard = kb
	f.notifyLocked()
	return f.wireLocked(m), nil
}

func keyboardsEqual(a, b [][]Button) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return slices.EqualFunc(a, b, func(x, y []Button) bool { return slices.Equal(x, y) })
}

// filterAllowed drops the updates of kinds allowed does not name (all
// pass when it is empty), as Telegram never sends them.
func filterAllowed(updates []models.Update, allowed []string) []models.Update {
	if len(allowed) == 0 {
		return updates
	}
	out := updates[:0:0]
	for _, u := range updates {
		if slices.Contains(allowed, updateKind(u)) {
			out = append(out, u)
		}
	}
	return out
}

func updateKind(u models.Update) string {
	switch {
	case u.Message != nil:
		return models.AllowedUpdateMessage
	case u.EditedMessage != nil:
		return models.AllowedUpdateEditedMessage
	case u.ChannelPost != nil:
		return models.AllowedUpdateChannelPost
	case u.CallbackQuery != nil:
		return models.AllowedUpdateCallbackQuery
	}
	return "other"
}
