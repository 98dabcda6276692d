package bot

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Deliver sends a scheduled run's text into its chat (and topic), as an
// answer is sent (schedule.Deliverer). It stops at the first part
// Telegram does not take — the paced sender has retried a 429 after its
// retry_after and a 5xx or a network error with backoff by then — and
// says how many parts went (chat.PartlySentError), so that the next try
// starts after them. A chat the bot can no longer write to (403: blocked
// or removed; the chat or the topic gone, or the topic closed; a group
// that became a supergroup) is schedule.Permanent: the job is paused, and /jobs says
// why. Any other failure is the scheduler's to try again.
func (c *Chat) Deliver(ctx context.Context, m schedule.Message) error {
	place := chat.Place{Chat: m.Place.Chat, Topic: m.Place.Topic}
	chunks := tgformat.Render(m.Text)
	if m.Skip >= len(chunks) {
		return nil
	}
	for i, ch := range chunks[max(m.Skip, 0):] {
		if err := c.sendChunk(ctx, place, ch); err != nil {
			c.log.Warn("scheduled answer not delivered", "chat", place, "job", m.Job, "part", m.Skip+i+1, "of", len(chunks), "err", err.Error())
			return &chat.PartlySentError{Sent: i, Err: classifyDelivery(err)}
		}
	}
	return nil
}

// classifyDelivery marks err permanent when the chat cannot be written to
// again, and carries a 429's retry_after.
func classifyDelivery(err error) error {
	var migrate *tgbot.MigrateError
	var tooMany *tgbot.TooManyRequestsError
	text := strings.ToLower(err.Error())
	switch code := telegram.StatusOf(err); {
	case code == http.StatusForbidden:
		return schedule.Permanent("the bot can no longer write to this chat (it was blocked or removed)", err)
	case errors.As(err, &migrate):
		return schedule.Permanent("the group became a supergroup with a new id; schedule the task again there", err)
	case code == http.StatusBadRequest && strings.Contains(text, "chat not found"):
		return schedule.Permanent("the chat is gone", err)
	case code == http.StatusBadRequest && strings.Contains(text, "thread not found"), strings.Contains(text, "topic_deleted"):
		return schedule.Permanent("the topic is gone", err)
	case code == http.StatusBadRequest && strings.Contains(text, "topic_closed"):
		return schedule.Permanent("the topic is closed; resume the task once it is open again", err)
	case errors.As(err, &tooMany):
		return retryAfterError{err: err, wait: time.Duration(max(tooMany.RetryAfter, 1)) * time.Second}
	}
	return err
}

// retryAfterError is a 429 that asks the next try to wait.
type retryAfterError struct {
	err  error
	wait time.Duration
}

func (e retryAfterError) Error() string             { return e.err.Error() }
func (e retryAfterError) Unwrap() error             { return e.err }
func (e retryAfterError) RetryAfter() time.Duration { return e.wait }
