package bot

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strconv"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// The model's questions (the ask_user tool): one button per answer and,
// when the model allows it, a typed answer taken from the chat (as a
// server's form takes one: it goes to the question, not to the model as a
// new message). The rules are the approvals' and the forms': in a private
// chat its user answers, in a group the user whose message started the
// turn or an admin (the others' presses get an alert, their messages go
// on as usual); one question or form is open in a chat at a time; /stop,
// /new and the timeout end it.

// askRefusal is the alert for a press by someone the question is not for.
const askRefusal = "This question is for the person who asked me, or an admin."

// AskUser puts the model's question to the chat (session.UserAsker).
func (c *Chat) AskUser(ctx context.Context, place chat.Place, uq session.UserQuestion) (session.UserAnswer, error) {
	release, err := c.forms.acquire(ctx, place)
	if err != nil {
		return session.UserAnswer{}, err
	}
	defer release()
	var may func(int64) bool
	if place.Chat < 0 { // a group: not everyone in it may answer
		may = func(user int64) bool { return user == uq.UserID || (c.isAdmin != nil && c.isAdmin(user)) }
	}
	var typed <-chan typedAnswer
	if uq.AllowText {
		l := c.forms.listen(place, may)
		defer c.forms.unlisten(place, l)
		typed = l.ch
	}
	q := Question{Text: askUserText(uq), HTML: true, MayAnswer: may, Refusal: askRefusal}
	for i, o := range uq.Options {
		q.Buttons = append(q.Buttons, []Button{{Label: o, Choice: strconv.Itoa(i)}})
	}
	if err := q.check(); err != nil {
		return session.UserAnswer{}, err
	}
	ps, err := c.pose(ctx, place, q, false)
	if err != nil {
		return session.UserAnswer{}, err
	}
	ans, line, err := c.waitAnswer(ctx, ps, uq, typed)
	c.closeWith(ctx, ps, line)
	return ans, err
}

// askUserText is the question's message (Telegram HTML).
func askUserText(uq session.UserQuestion) string {
	text := "❓ " + html.EscapeString(uq.Question)
	if uq.AllowText {
		text += "\n\n<i>Press an answer, or write your own.</i>"
	}
	return text
}

// waitAnswer waits for a press, a typed answer, the timeout or ctx's end,
// and returns the answer with the line the question ends with.
func (c *Chat) waitAnswer(ctx context.Context, ps *posed, uq session.UserQuestion, typed <-chan typedAnswer) (session.UserAnswer, string, error) {
	var timeout <-chan time.Time
	if uq.Timeout > 0 {
		t := time.NewTimer(uq.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var a Answer
	var err error
	select {
	case a = <-ps.p.answer:
	case t := <-typed:
		c.asks.close(ps.p)
		return session.UserAnswer{Text: t.text, By: t.name}, "→ " + t.name + " wrote an answer.", nil
	case <-timeout:
		err = fmt.Errorf("%w within %s", session.ErrNoUserAnswer, session.DurationText(uq.Timeout))
	case <-ctx.Done():
		err = ctx.Err()
	}
	if late, ok := c.asks.close(ps.p); ok && errors.Is(err, session.ErrNoUserAnswer) {
		a, err = late, nil // pressed as the time ran out
	}
	switch {
	case errors.Is(err, session.ErrNoUserAnswer):
		return session.UserAnswer{}, "→ No answer in time.", err
	case err != nil:
		return session.UserAnswer{}, "→ Cancelled.", err
	}
	return session.UserAnswer{Choice: a.Label, By: a.Name}, fmt.Sprintf("→ %s (%s)", a.Label, a.Name), nil
}
