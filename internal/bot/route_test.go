package bot

import (
	"strings"
	"testing"
	"unicode/utf8"

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
		{"group mention", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot what is 2+2?", Entities: mentionOf(0)}, routeText, "what is 2+2?"},
		{"group mention comma", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot, hi", Entities: mentionOf(0)}, routeText, "hi"},
		{"group mention inside", &models.Message{From: user, Chat: small, Text: "hey @VOLCANIC_TEST_BOT tell me", Entities: mentionOf(4)}, routeText, "hey tell me"},
		{"group mention of a longer name", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot2 hi", Entities: []models.MessageEntity{{Type: models.MessageEntityTypeMention, Length: 19}}}, routeIgnore, ""},
		{"group e-mail is no mention", &models.Message{From: user, Chat: grp, Text: "mail x@volcanic_test_bot"}, routeIgnore, ""},
		{"group bare mention", &models.Message{From: user, Chat: grp, Text: "@volcanic_test_bot", Entities: mentionOf(0)}, routeEmpty, ""},
		{"group reply to the bot", &models.Message{From: user, Chat: grp, Text: "and then?", ReplyToMessage: fromBot}, routeText, "and then?"},
		{"group reply to someone else", &models.Message{From: user, Chat: grp, Text: "yes", ReplyToMessage: fromOther}, routeIgnore, ""},
		{"group sticker with mention", &models.Message{From: user, Chat: grp, Caption: "@volcanic_test_bot look", CaptionEntities: mentionOf(0)}, routeMedia, ""},
		{"group photo with mention", &models.Message{From: user, Chat: grp, Caption: "@volcanic_test_bot look", CaptionEntities: mentionOf(0), Photo: []models.PhotoSize{{}}}, routeFiles, "look"},
		{"group photo without mention", &models.Message{From: user, Chat: grp, Caption: "look", Photo: []models.PhotoSize{{}}}, routeIgnore, ""},
		{"group command to us", &models.Message{From: user, Chat: grp, Text: "/mcp@volcanic_test_bot restart x"}, routeCommand, "mcp"},
		{"group bare known command", &models.Message{From: user, Chat: grp, Text: "/stop"}, routeCommand, "stop"},
		{"group bare unknown command", &models.Message{From: user, Chat: grp, Text: "/roll"}, routeIgnore, ""},
		{"group unknown command to us", &models.Message{From: user, Chat: grp, Text: "/roll@volcanic_test_bot"}, routeCommand, "roll"},
		{"group command to another bot", &models.Message{From: user, Chat: grp, Text: "/new@other_bot"}, routeIgnore, ""},
		{"from a bot", &models.Message{From: &models.User{ID: 5, IsBot: true}, Chat: private, Text: "hi"}, routeIgnore, ""},
		{"anonymous admin", &models.Message{Chat: grp, SenderChat: &grp, Text: "@volcanic_test_bot hi", Entities: mentionOf(0)}, routeIgnore, ""},
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

// mentionOf is the entity Telegram sends for "@volcanic_test_bot" at offset (in UTF-16 units).
func mentionOf(offset int) []models.MessageEntity {
	return []models.MessageEntity{{Type: models.MessageEntityTypeMention, Offset: offset, Length: len("@volcanic_test_bot")}}
}

// In groups the bot's @mention is found by the entities Telegram sends, whose offsets are UTF-16 code units, not
// by searching the text: texts whose lower-case form has another length ("Ⱥ" grows, "İ" too) once crashed or
// were missed, and strangers can send them (routing runs before the allowlist).
func TestRouteMentionEntities(t *testing.T) {
	me := models.User{ID: 99, IsBot: true, Username: "volcanic_test_bot"}
	grp := models.Chat{ID: group, Type: models.ChatTypeSupergroup}
	msg := func(text string, ents []models.MessageEntity) *models.Message {
		return &models.Message{From: &models.User{ID: stranger}, Chat: grp, Text: text, Entities: ents}
	}
	photo := func(caption string, ents []models.MessageEntity) *models.Message {
		return &models.Message{From: &models.User{ID: stranger}, Chat: grp, Caption: caption, CaptionEntities: ents, Photo: []models.PhotoSize{{}}}
	}
	ent := func(typ models.MessageEntityType, offset, length int) models.MessageEntity {
		return models.MessageEntity{Type: typ, Offset: offset, Length: length}
	}
	const mention = models.MessageEntityTypeMention

	tests := []struct {
		name string
		m    *models.Message
		kind routeKind
		text string
	}{
		{"lower case longer than the text", msg("Ⱥ @volcanic_test_bot hi", mentionOf(2)), routeText, "Ⱥ hi"},
		{"lower case longer, mention at the end", msg("Ⱥ @volcanic_test_bot", mentionOf(2)), routeText, "Ⱥ"},
		{"lower case of İ", msg("İstanbul @volcanic_test_bot weather?", mentionOf(9)), routeText, "İstanbul weather?"},
		{"emoji before the mention", msg("😀😀 @volcanic_test_bot hi", mentionOf(5)), routeText, "😀😀 hi"},
		{"family emoji before the mention", msg("👨\u200d👩\u200d👧: @volcanic_test_bot, plan a trip", mentionOf(10)), routeText, "👨\u200d👩\u200d👧: plan a trip"},
		{"mention at the end", msg("what is this? @volcanic_test_bot", mentionOf(14)), routeText, "what is this?"},
		{"mention in capitals", msg("hey @VOLCANIC_TEST_BOT tell me", mentionOf(4)), routeText, "hey tell me"},
		{"two mentions", msg("@volcanic_test_bot ask @volcanic_test_bot again",
			[]models.MessageEntity{ent(mention, 0, 18), ent(mention, 23, 18)}), routeText, "ask again"},
		{"another user's mention is kept", msg("@user1002 @volcanic_test_bot hi",
			[]models.MessageEntity{ent(mention, 0, 9), ent(mention, 10, 18)}), routeText, "@user1002 hi"},
		{"a longer name is not ours", msg("@volcanic_test_bot2 hi", []models.MessageEntity{ent(mention, 0, 19)}), routeIgnore, ""},
		{"e-mail address is no mention", msg("write to me@volcanic_test_bot.org",
			[]models.MessageEntity{ent(models.MessageEntityTypeEmail, 9, 24)}), routeIgnore, ""},
		{"our name in another entity", msg("@volcanic_test_bot hi", []models.MessageEntity{ent(models.MessageEntityTypeBold, 0, 18)}), routeIgnore, ""},
		{"no entities", msg("@volcanic_test_bot hi", nil), routeIgnore, ""},
		{"offset past the end", msg("@volcanic_test_bot hi", mentionOf(100)), routeIgnore, ""},
		{"negative offset", msg("@volcanic_test_bot hi", mentionOf(-3)), routeIgnore, ""},
		{"huge length", msg("@volcanic_test_bot hi", []models.MessageEntity{ent(mention, 0, 1<<40)}), routeIgnore, ""},
		{"negative length", msg("@volcanic_test_bot hi", []models.MessageEntity{ent(mention, 18, -18)}), routeIgnore, ""},
		{"offset inside a surrogate pair", msg("😀@volcanic_test_bot hi", mentionOf(1)), routeIgnore, ""},
		{"offset counted in bytes", msg("Ⱥ @volcanic_test_bot hi", mentionOf(3)), routeIgnore, ""},
		{"the same mention twice", msg("@volcanic_test_bot hi", append(mentionOf(0), mentionOf(0)...)), routeText, "hi"},
		{"overlapping mentions", msg("@volcanic_test_bot hi", []models.MessageEntity{ent(mention, 0, 18), ent(mention, 5, 18)}), routeText, "hi"},
		{"caption with a mention", photo("Ⱥ @volcanic_test_bot look", mentionOf(2)), routeFiles, "Ⱥ look"},
		{"caption with its entities in the wrong field", &models.Message{From: &models.User{ID: stranger}, Chat: grp,
			Caption: "@volcanic_test_bot look", Entities: mentionOf(0), Photo: []models.PhotoSize{{}}}, routeIgnore, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := routeMessage(tt.m, me)
			if r.kind != tt.kind || r.text != tt.text {
				t.Errorf("route = %v %q, want %v %q", r.kind, r.text, tt.kind, tt.text)
			}
		})
	}
}

// FuzzRouteMessage routes any text with any mention entities: strangers
// reach routeMessage before the allowlist, so it must never panic, and what
// it hands on is still valid UTF-8 when the text was.
func FuzzRouteMessage(f *testing.F) {
	f.Add("Ⱥ @volcanic_test_bot hi", 2, 18, 0, 0, false)
	f.Add("İstanbul @volcanic_test_bot", 9, 18, 100, 18, true)
	f.Add("😀@volcanic_test_bot, hi", 1, 18, 2, 18, false)
	f.Add("@volcanic_test_bot: /new", -1, 1<<40, 0, 18, false)
	f.Add("a\xff@volcanic_test_bot\xf0", 2, 18, 1, 19, true)
	me := models.User{ID: 99, IsBot: true, Username: "volcanic_test_bot"}
	grp := models.Chat{ID: group, Type: models.ChatTypeSupergroup}
	f.Fuzz(func(t *testing.T, text string, off1, len1, off2, len2 int, caption bool) {
		ents := []models.MessageEntity{
			{Type: models.MessageEntityTypeMention, Offset: off1, Length: len1},
			{Type: models.MessageEntityTypeMention, Offset: off2, Length: len2},
		}
		m := &models.Message{From: &models.User{ID: stranger}, Chat: grp, Text: text, Entities: ents}
		if caption {
			m = &models.Message{From: &models.User{ID: stranger}, Chat: grp, Caption: text, CaptionEntities: ents, Photo: []models.PhotoSize{{}}}
		}
		r := routeMessage(m, me)
		if len(r.text) > len(text) || utf8.ValidString(text) && !utf8.ValidString(r.text) {
			t.Fatalf("routeMessage(%q, %+v) = %v %q", text, ents, r.kind, r.text)
		}
		if r.kind == routeText && strings.TrimSpace(r.text) == "" {
			t.Fatalf("routeMessage(%q, %+v) gives blank text to the session", text, ents)
		}
	})
}
