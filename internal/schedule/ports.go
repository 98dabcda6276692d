package schedule

import (
	"context"
	"errors"
	"time"
)

// Runner runs a job: one turn in the job's chat (topic) with the task as
// its message, told it is a scheduled run at slot (late: well after it)
// and given the job's last answer. The session implements it.
type Runner interface {
	RunJob(ctx context.Context, job Job, slot time.Time, late bool) (Result, error)
}

// Result is what a run answered and what it cost.
type Result struct {
	Answer string
	Tokens int
}

// Message is a text for a job's chat.
type Message struct {
	Place Place
	Text  string
	Job   string // the job's id (a Cancel button may name it)
	Run   string // the delivery's key: the same Run is the same text
	// Skip is how many parts of a long text already reached the chat (a
	// try cut short): the sender starts after them (bot.Chat's
	// SendTextFrom), and a chat.PartlySentError it returns counts the
	// parts of this try, from Skip on.
	Skip int
}

// Deliverer sends a text to a chat. An error is retried with backoff,
// unless it is a *PermanentError (the chat is gone: 403, chat not
// found), which pauses the job. An error with a RetryAfter method (a
// 429) is not retried before that; one whose chain carries a
// chat.PartlySentError resumes after the parts sent.
type Deliverer interface {
	Deliver(ctx context.Context, m Message) error
}

// PermanentError is a delivery that can never succeed: the bot was
// blocked or removed, the chat is gone. Reason is shown in /jobs.
type PermanentError struct {
	Reason string
	Err    error
}

func (e *PermanentError) Error() string {
	if e.Err == nil {
		return "permanent: " + e.Reason
	}
	return "permanent: " + e.Reason + ": " + e.Err.Error()
}

func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as a delivery that can never succeed.
func Permanent(reason string, err error) error { return &PermanentError{Reason: reason, Err: err} }

// retryAfter is the wait err asks for (a 429's retry_after); 0: none.
func retryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return ra.RetryAfter()
	}
	return 0
}
