package bot

import (
	"testing"

	"github.com/go-telegram/bot/models"
)

func TestRouteMessage(t *testing.T) {
	me := models.User{ID: 99, IsBot: true, Username: "volcanic_test_bot"}
	user := &models.User{ID: alice}
	private := models.Chat{ID: alice, Type: models.ChatTypePrivate}
	grp := models.Chat{ID: group, Type: models.ChatTypeSupergroup}
	small := models.Chat{ID: -42, Type: models.ChatTypeGroup}
	fromBot := &models.Message{ID: 5, From: &me, Chat: grp, Text: "an answer"}
	fromOther := &models.Message{ID: 6, From: &models.User{ID: bob}, Chat: grp, Text: "hi"}

	tests := []struct {
		name string
		m    *models.Message
		kind routeKind
		text string // routeText, routeFiles: the text; routeCommand: the name
	}{
		{"private text", &models.Message{From: user, Chat: private, Text: "hello"}, routeText, "hello"},
		{"private mention kept", &models.Message{From: user, Chat: private, Text: "hi @volcanic_test_bot"}, routeText, "hi @volcanic_test_bot"},
		{"private command", &models.Message{From: user, Chat: private, Text: "/new"}, routeCommand, "new"},
		{"private command to us", &models.Message{From: user, Chat: private, Text: "/new@Volcanic_Test_Bot"}, routeCommand, "new"},
		{"private command to another bot", &models.Message{From: user, Chat: private, Text: "/new@other_bot"}, routeIgnore, ""},
		{"private unknown command", &models.Message{From: user, Chat: private, Text: "/weather"}, routeCommand, "weather"},
		{"private photo", &models.Message{From: user, Chat: private, Caption: "look", Photo: []models.PhotoSize{{}}}, routeFiles, "look"},
		{"private photo without caption", &models.Message{From: user, Chat: private, Photo: []models.PhotoSize{{}}}, routeFiles, ""},
		{"private document", &models.Message{From: user, Chat: private, Document: &models.Document{FileName: "a.pdf"}}, routeFiles, ""},
		{"private photo with a command caption", &models.Message{From: user, Chat: private, Caption: "/new", Photo: []models.PhotoSize{{}}}, routeFiles, "/new"},
		{"private sticker", &models.Message{From: user, Chat: private}, routeMedia, ""},
		{"group chatter", &models.Message{From: user, Chat: grp, Text: "hello all"}, routeIgnore, ""},
		{"group mention", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot what is 2+2?"}, routeText, "what is 2+2?"},
		{"group mention comma", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot, hi"}, routeText, "hi"},
		{"group mention inside", &models.Message{From: user, Chat: small, Text: "hey @VOLCANIC_TEST_BOT tell me"}, routeText, "hey tell me"},
		{"group mention of a longer name", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot2 hi"}, routeIgnore, ""},
		{"group e-mail is no mention", &models.Message{From: user, Chat: grp, Text: "mail x@volcanic_test_bot"}, routeIgnore, ""},
		{"group bare mention", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot"}, routeEmpty, ""},
		{"group reply to the bot", &models.Message{From: user, Chat: grp, Text: "and then?", ReplyToMessage: fromBot}, routeText, "and then?"},
		{"group reply to someone else", &models.Message{From: user, Chat: grp, Text: "yes", ReplyToMessage: fromOther}, routeIgnore, ""},
		{"group sticker with mention", &models.Message{From: user, Chat: grp, Caption: "@volcanic_test_bot look"}, routeMedia, ""},
		{"group photo with mention", &models.Message{From: user, Chat: grp, Caption: "@volcanic_test_bot look", Photo: []models.PhotoSize{{}}}, routeFiles, "look"},
		{"group photo without mention", &models.Message{From: user, Chat: grp, Caption: "look", Photo: []models.PhotoSize{{}}}, routeIgnore, ""},
		{"group command to us", &models.Message{From: user, Chat: grp, Text: "/mcp@volcanic_test_bot restart x"}, routeCommand, "mcp"},
		{"group bare known command", &models.Message{From: user, Chat: grp, Text: "/stop"}, routeCommand, "stop"},
		{"group bare unknown command", &models.Message{From: user, Chat: grp, Text: "/roll"}, routeIgnore, ""},
		{"group unknown command to us", &models.Message{From: user, Chat: grp, Text: "/roll@volcanic_test_bot"}, routeCommand, "roll"},
		{"group command to another bot", &models.Message{From: user, Chat: grp, Text: "/new@other_bot"}, routeIgnore, ""},
		{"from a bot", &models.Message{From: &models.User{ID: 5, IsBot: true}, Chat: private, Text: "hi"}, routeIgnore, ""},
		{"anonymous admin", &models.Message{Chat: grp, SenderChat: &grp, Text: "@volcanic_test_bot hi"}, routeIgnore, ""},
		{"channel post", &models.Message{From: user, Chat: models.Chat{ID: -100, Type: models.ChatTypeChannel}, Text: "x"}, routeIgnore, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := routeMessage(tt.m, me)
			got := r.text
			if r.kind == routeCommand {
				got = r.cmd.Name
			}
			if r.kind != tt.kind || got != tt.text {
				t.Errorf("route = %v %q, want %v %q", r.kind, got, tt.kind, tt.text)
			}
		})
	}
}
