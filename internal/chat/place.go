package chat

import (
	"log/slog"
	"strconv"
)

// Place is where one conversation lives: a Telegram chat, or one forum
// topic of it. It keys sessions, the chat folders and every call of the
// session's chat port. Topic is the topic's message_thread_id; 0 is no
// topic — a chat without topics, or a forum's General topic, which is the
// whole chat as it was before topics were conversations (so its folders
// and records keep their names).
type Place struct {
	Chat  int64
	Topic int
}

// In is the place of chatID with no topic: the whole chat (a forum's
// General topic).
func In(chatID int64) Place { return Place{Chat: chatID} }

// String is the chat id, then "/" and the topic when there is one:
// "-1001234", "-1001234/7".
func (p Place) String() string {
	s := strconv.FormatInt(p.Chat, 10)
	if p.Topic != 0 {
		s += "/" + strconv.Itoa(p.Topic)
	}
	return s
}

// LogValue logs a place without a topic as its chat id (a number, as
// before topics), one with a topic as its String.
func (p Place) LogValue() slog.Value {
	if p.Topic == 0 {
		return slog.Int64Value(p.Chat)
	}
	return slog.StringValue(p.String())
}
