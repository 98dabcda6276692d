package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	tgbot "github.com/go-telegram/bot"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// A forum topic that is deleted (sends into it fail: "message thread not
// found") or closed (its service message; sends fail with TOPIC_CLOSED)
// ends its session once, with one log line; the chat is not written to.
// Reopened, it may end again. Other places and other failures end nothing.
func TestForumTopicsThatEnd(t *testing.T) {
	topic := chat.Place{Chat: group, Topic: 7}
	cases := []struct {
		name string
		act  func(h *harness, send func(chat.Place) error)
		ends []string // the sessions' end calls
		logs int      // log lines of a topic's end
	}{
		{"deleted: every send fails, one end", func(h *harness, send func(chat.Place) error) {
			h.fake.DeleteTopic(group, 7)
			for range 2 {
				if err := send(topic); err == nil {
					t.Error("a send into a deleted topic went through")
				}
			}
		}, []string{"end -1001234567890/7"}, 1},
		{"closed: its service message ends it, sends fail after", func(h *harness, send func(chat.Place) error) {
			h.fake.CloseTopic(group, alice, 7)
			h.sess.waitCalls(t, "end", 1)
			if err := send(topic); err == nil {
				t.Error("a send into a closed topic went through")
			}
		}, []string{"end -1001234567890/7"}, 1},
		{"closed, reopened, closed again: two ends", func(h *harness, send func(chat.Place) error) {
			h.fake.CloseTopic(group, alice, 7)
			h.sess.waitCalls(t, "end", 1)
			h.fake.ReopenTopic(group, alice, 7)
			if err := send(topic); err != nil {
				t.Errorf("a send into the reopened topic: %v", err)
			}
			h.fake.CloseTopic(group, alice, 7)
			h.sess.waitCalls(t, "end", 2)
		}, []string{"end -1001234567890/7", "end -1001234567890/7"}, 2},
		{"the General topic and other failures end nothing", func(h *harness, send func(chat.Place) error) {
			h.fake.FailNext("sendMessage", http.StatusBadRequest, "Bad Request: message thread not found", 0)
			h.fake.FailNext("sendMessage", http.StatusBadRequest, "Bad Request: message thread not found", 0)
			_ = send(chat.In(group))
			h.fake.FailNext("sendMessage", http.StatusForbidden, "Forbidden: bot was kicked", 0)
			_ = send(topic)
		}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startBot(t, nil)
			h.fake.TopicMessage(group, alice, 7, "a topic") // the fake knows the topic from now on
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			defer cancel()
			send := func(p chat.Place) error { return h.bot.Chat().SendText(ctx, p, "the answer") }
			tc.act(h, send)
			if got := h.sess.callsWith("end"); strings.Join(got, "|") != strings.Join(tc.ends, "|") {
				t.Errorf("the sessions got %q; want %q", got, tc.ends)
			}
			if n := strings.Count(h.logs.String(), "its session ended"); n != tc.logs {
				t.Errorf("%d log lines of an end; want %d:\n%s", n, tc.logs, h.logs.String())
			}
			for _, m := range h.fake.Sent(group) {
				if m.ThreadID == 7 && strings.Contains(m.Text, "closed") {
					t.Errorf("the bot wrote about the topic's end in it: %q", m.Text)
				}
			}
		})
	}
}

func TestTopicGone(t *testing.T) {
	topic := chat.Place{Chat: group, Topic: 7}
	bad := func(desc string) error { return fmt.Errorf("%w, %s", tgbot.ErrorBadRequest, desc) }
	for _, tc := range []struct {
		name  string
		place chat.Place
		err   error
		want  string
	}{
		{"thread not found", topic, bad("Bad Request: message thread not found"), "deleted"},
		{"TOPIC_DELETED", topic, bad("Bad Request: TOPIC_DELETED"), "deleted"},
		{"TOPIC_CLOSED", topic, bad("Bad Request: TOPIC_CLOSED"), "closed"},
		{"another 400", topic, bad("Bad Request: message is too long"), ""},
		{"a 403", topic, fmt.Errorf("%w, %s", tgbot.ErrorForbidden, "Forbidden: TOPIC_CLOSED"), ""},
		{"no topic", chat.In(group), bad("Bad Request: message thread not found"), ""},
		{"no error", topic, nil, ""},
		{"a network error", topic, errors.New("dial tcp: thread not found"), ""},
	} {
		if got := topicGone(tc.place, tc.err); got != tc.want {
			t.Errorf("%s: topicGone = %q, want %q (status %d)", tc.name, got, tc.want, telegram.StatusOf(tc.err))
		}
	}
}
