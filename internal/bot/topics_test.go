package bot

import (
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestPlaceOf(t *testing.T) {
	forum := models.Chat{ID: -1001, Type: models.ChatTypeSupergroup, IsForum: true}
	group := models.Chat{ID: -1002, Type: models.ChatTypeSupergroup}
	private := models.Chat{ID: 42, Type: models.ChatTypePrivate}
	for _, tc := range []struct {
		name string
		m    models.Message
		want chat.Place
	}{
		{"a forum's topic", models.Message{Chat: forum, MessageThreadID: 7, IsTopicMessage: true}, chat.Place{Chat: -1001, Topic: 7}},
		{"a forum's General topic", models.Message{Chat: forum}, chat.In(-1001)},
		{"a reply thread in a forum's General", models.Message{Chat: forum, MessageThreadID: 5}, chat.In(-1001)},
		{"an ordinary group's reply thread", models.Message{Chat: group, MessageThreadID: 5}, chat.In(-1002)},
		{"a group that says topic without being a forum", models.Message{Chat: group, MessageThreadID: 5, IsTopicMessage: true}, chat.In(-1002)},
		{"a private chat", models.Message{Chat: private}, chat.In(42)},
		{"a private chat's topic", models.Message{Chat: private, MessageThreadID: 3, IsTopicMessage: true}, chat.Place{Chat: 42, Topic: 3}},
	} {
		if got := placeOf(&tc.m); got != tc.want {
			t.Errorf("%s: placeOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// In a topic the bot created, a message that mentions nobody is no reply
// to the bot: Telegram's reply to the topic's first message is not the
// user's.
func TestTopicRootIsNoReply(t *testing.T) {
	me := models.User{ID: 1, IsBot: true, Username: "volcanic_test_bot"}
	forum := models.Chat{ID: -1001, Type: models.ChatTypeSupergroup, IsForum: true}
	root := &models.Message{ID: 7, From: &me, Chat: forum, ForumTopicCreated: &models.ForumTopicCreated{Name: "Ideas"}}
	for _, tc := range []struct {
		name  string
		reply *models.Message
		want  routeKind
	}{
		{"the topic's root", root, routeIgnore},
		{"a real reply to the bot", &models.Message{ID: 9, From: &me, Chat: forum, Text: "an answer"}, routeText},
	} {
		m := &models.Message{ID: 10, From: &models.User{ID: 5}, Chat: forum, Text: "hello there", MessageThreadID: 7,
			IsTopicMessage: true, ReplyToMessage: tc.reply}
		if got := routeMessage(withoutTopicRoot(m), me).kind; got != tc.want {
			t.Errorf("%s: route %v, want %v", tc.name, got, tc.want)
		}
		if m.ReplyToMessage != tc.reply {
			t.Errorf("%s: the update's message was changed", tc.name)
		}
	}
}
