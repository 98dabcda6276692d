package bot

import (
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// The names a group's messages tell: its title, a topic's from the topic's
// first message (replied to by every message of the topic) or from its
// creation or rename; private chats tell none. The table is bounded.
func TestPlaceNames(t *testing.T) {
	forum := models.Chat{ID: -100, Type: models.ChatTypeSupergroup, Title: "Family", IsForum: true}
	root := &models.Message{ID: 7, ForumTopicCreated: &models.ForumTopicCreated{Name: "Bills"}}
	tests := []struct {
		name        string
		m           *models.Message
		place       chat.Place
		group, topc string
	}{
		{"a group's title", &models.Message{Chat: models.Chat{ID: -5, Title: "Team"}}, chat.In(-5), "Team", ""},
		{"a topic's root", &models.Message{Chat: forum, MessageThreadID: 7, IsTopicMessage: true, ReplyToMessage: root}, chat.Place{Chat: -100, Topic: 7}, "Family", "Bills"},
		{"a reply to another message", &models.Message{Chat: forum, MessageThreadID: 8, IsTopicMessage: true, ReplyToMessage: root}, chat.Place{Chat: -100, Topic: 8}, "Family", ""},
		{"a rename", &models.Message{Chat: forum, MessageThreadID: 9, ForumTopicEdited: &models.ForumTopicEdited{Name: "Taxes"}}, chat.Place{Chat: -100, Topic: 9}, "Family", "Taxes"},
		{"a private chat", &models.Message{Chat: models.Chat{ID: 5, Title: "x"}}, chat.In(5), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newPlaceNames()
			n.note(tt.m)
			if g, tp := n.of(tt.place); g != tt.group || tp != tt.topc {
				t.Errorf("of(%v) = %q, %q; want %q, %q", tt.place, g, tp, tt.group, tt.topc)
			}
		})
	}
	n := newPlaceNames()
	for i := range maxPlaceNames + 10 {
		n.note(&models.Message{Chat: models.Chat{ID: int64(-1 - i), Title: "g"}})
	}
	if got := len(n.groups) + len(n.topics); got > maxPlaceNames {
		t.Errorf("%d names kept, want at most %d", got, maxPlaceNames)
	}
}
