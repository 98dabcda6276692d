package telegramtest

import (
	"context"
	"strings"
	"testing"

	tgbot "github.com/go-telegram/bot"
)

// The fake's forums: a topic message makes its chat a forum; sends into
// its topics keep their thread and come back as topic messages; a thread
// the chat has no topic of — General's id 1 too, and any in a chat without
// topics — is refused as Telegram refuses it.
func TestTopics(t *testing.T) {
	f := unlimited(t)
	b := client(t, f)
	ctx := context.Background()
	const forum, group = int64(-1001000), int64(-1002000)
	f.TopicMessage(forum, 5, 7, "hi")
	m, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: forum, MessageThreadID: 7, Text: "in seven"})
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageThreadID != 7 || !m.IsTopicMessage || !m.Chat.IsForum {
		t.Errorf("sent into topic 7: %+v", m)
	}
	if s, ok := f.SentMessage(forum, m.ID); !ok || s.ThreadID != 7 {
		t.Errorf("SentMessage = %+v %v", s, ok)
	}
	if g, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: forum, Text: "in General"}); err != nil || g.MessageThreadID != 0 || !g.Chat.IsForum {
		t.Errorf("General: %+v %v", g, err)
	}
	for _, tc := range []struct {
		name   string
		chat   int64
		thread int
	}{
		{"an unknown topic", forum, 8},
		{"General's id", forum, 1},
		{"a chat without topics", group, 7},
	} {
		_, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: tc.chat, MessageThreadID: tc.thread, Text: "x"})
		if err == nil || !strings.Contains(err.Error(), "message thread not found") {
			t.Errorf("%s: sendMessage %v", tc.name, err)
		}
		if _, err := b.SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: tc.chat, MessageThreadID: tc.thread, Action: "typing"}); err == nil {
			t.Errorf("%s: sendChatAction taken", tc.name)
		}
	}
	reqs := f.RequestsFor("sendMessage")
	if reqs[0].ThreadID() != 7 || reqs[1].ThreadID() != 0 {
		t.Errorf("threads of the requests: %d, %d", reqs[0].ThreadID(), reqs[1].ThreadID())
	}
}
