package bot

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

var _ schedule.Deliverer = (*Chat)(nil)

// Deliver sends into the job's topic; a chat that refuses the bot for
// good is permanent, a 429 carries its wait, a long text resumes after
// the parts sent.
func TestDeliver(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		desc      string
		retry     int
		permanent string // the reason; "": not permanent
		wait      time.Duration
	}{
		{name: "delivered"},
		{name: "blocked", status: http.StatusForbidden, desc: "Forbidden: bot was blocked by the user", permanent: "blocked or removed"},
		{name: "chat gone", status: http.StatusBadRequest, desc: "Bad Request: chat not found", permanent: "the chat is gone"},
		{name: "topic gone", status: http.StatusBadRequest, desc: "Bad Request: message thread not found", permanent: "the topic is gone"},
		{name: "topic closed", status: http.StatusBadRequest, desc: "Bad Request: TOPIC_CLOSED", permanent: "the topic is closed"},
		{name: "other 400", status: http.StatusBadRequest, desc: "Bad Request: something else"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newBot(t, nil)
			h.fake.TopicMessage(group, alice, 42, "a topic") // the fake knows the topic from now on
			if tt.status != 0 {
				h.fake.FailNext("sendMessage", tt.status, tt.desc, tt.retry)
				// A 400 to the HTML is tried again as plain text (sendChunk).
				h.fake.FailNext("sendMessage", tt.status, tt.desc, tt.retry)
			}
			m := schedule.Message{Place: schedule.Place{Chat: group, Topic: 42}, Text: "the answer", Job: "j1", Run: "j1@1"}
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			defer cancel()
			err := h.bot.Chat().Deliver(ctx, m)
			var perm *schedule.PermanentError
			switch {
			case tt.status == 0 && err != nil:
				t.Fatal(err)
			case tt.status == 0:
				if sent := h.fake.Sent(group); len(sent) != 1 || sent[0].ThreadID != 42 || sent[0].Text != "the answer" {
					t.Errorf("sent %+v", sent)
				}
			case tt.permanent != "":
				if !errors.As(err, &perm) || !strings.Contains(perm.Reason, tt.permanent) {
					t.Errorf("err %v, want permanent %q", err, tt.permanent)
				}
			case err == nil || errors.As(err, &perm):
				t.Errorf("err %v, want one to try again", err)
			}
		})
	}
}

// A long text cut short reports the parts that went, and the next try
// starts after them.
func TestDeliverResumes(t *testing.T) {
	h := newBot(t, nil)
	long := strings.Repeat("word ", 1000) + "\n\n" + strings.Repeat("more ", 1000)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	m := schedule.Message{Place: schedule.Place{Chat: alice}, Text: long}
	if err := h.bot.Chat().Deliver(ctx, m); err != nil {
		t.Fatal(err)
	}
	parts := len(h.fake.Sent(alice))
	if parts < 2 {
		t.Fatalf("%d parts, want a split text", parts)
	}
	m.Skip = 1
	h.fake.FailNext("sendMessage", http.StatusForbidden, "Forbidden: bot was kicked", 0)
	err := h.bot.Chat().Deliver(ctx, m)
	if chat.SentParts(err) != 0 || len(h.fake.Sent(alice)) != parts {
		t.Errorf("err %v, sent %d", err, len(h.fake.Sent(alice)))
	}
	if err := h.bot.Chat().Deliver(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got := len(h.fake.Sent(alice)); got != 2*parts-1 {
		t.Errorf("%d messages, want %d: the first part skipped", got, 2*parts-1)
	}
}
