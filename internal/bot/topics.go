package bot

import (
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// placeOf is the conversation m belongs to: its forum topic when it was
// sent in one — a topic of a forum supergroup, or of a private chat with
// topics — and the whole chat otherwise. A forum's General topic is the
// whole chat (Telegram marks none of its messages as topic messages, and
// refuses its thread id on sends), and so is an ordinary group's reply
// thread, whose message_thread_id names no topic.
func placeOf(m *models.Message) chat.Place {
	if m.IsTopicMessage && m.MessageThreadID > 0 && (m.Chat.IsForum || m.Chat.Type == models.ChatTypePrivate) {
		return chat.Place{Chat: m.Chat.ID, Topic: m.MessageThreadID}
	}
	return chat.In(m.Chat.ID)
}

// withoutTopicRoot is m without the reply Telegram adds to every message
// of a forum topic that replies to nothing: the topic's first message
// (whose id is the topic's), which the user did not reply to. Kept, it
// would quote the topic's name to the model, and in a topic the bot
// created make every message there look like a reply to the bot.
func withoutTopicRoot(m *models.Message) *models.Message {
	if r := m.ReplyToMessage; r != nil && m.IsTopicMessage && r.ID == m.MessageThreadID {
		c := *m
		c.ReplyToMessage = nil
		return &c
	}
	return m
}
