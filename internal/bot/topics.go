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
