package bot

import (
	"context"
	"html"
	"time"

	tgbot "github.com/go-telegram/bot"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// The browser hand-off (session's browser_handoff): a message with the
// model's reason, a button that opens the live view of the chat's tab as a
// Mini App (web_app), Done, and New link (which voids the old link and any
// page it opened). In a group the link never goes to the group: it goes to
// a private chat with the bot (handoff_group.go). Done and New link follow
// the approvals' rules: in a private chat its user, in a group the user
// whose message started the turn or an admin; the others get an alert.

// The choices of a hand-off message.
const (
	choiceHandoffDone   = "done"
	choiceHandoffRelink = "relink"
)

// handoffRefusal is the alert for a press by someone the hand-off is not
// for.
const handoffRefusal = "This is for the person who asked me, or an admin."

// ShowHandoff shows a hand-off and waits for its end (session.HandoffChat):
// Done pressed here or in the view, the timeout, or ctx's end (/stop).
func (c *Chat) ShowHandoff(ctx context.Context, place chat.Place, p session.HandoffPrompt) (session.HandoffOutcome, error) {
	if place.Chat < 0 {
		return c.showGroupHandoff(ctx, place, p)
	}
	q := Question{Text: handoffText(p), HTML: true, Buttons: handoffButtons(p.Live.URL()), Refusal: handoffRefusal}
	if err := q.check(); err != nil {
		return session.HandoffStopped, err
	}
	ps, err := c.pose(ctx, place, q, true)
	if err != nil {
		return session.HandoffStopped, err
	}
	defer c.asks.close(ps.p)
	var timeout <-chan time.Time
	if p.Timeout > 0 {
		t := time.NewTimer(p.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	for done := false; !done; {
		select {
		case a := <-ps.p.answer:
			if a.Choice == choiceHandoffDone {
				p.Live.End(session.HandoffDone)
				continue
			}
			if u := p.Live.Relink(); u != "" {
				c.editButtons(ctx, ps, handoffButtons(u))
			}
		case <-p.Live.Done():
			done = true
		case <-timeout:
			p.Live.End(session.HandoffTimeout)
		case <-ctx.Done():
			p.Live.End(session.HandoffStopped)
		}
	}
	o := p.Live.Outcome()
	c.asks.close(ps.p)
	c.closeWith(ctx, ps, handoffOutcome(o, p.Timeout))
	return o, nil
}

// handoffText is the hand-off's message (Telegram HTML).
func handoffText(p session.HandoffPrompt) string {
	return "🖐 <b>Your turn in the browser</b>\n" + html.EscapeString(p.Reason) +
		"\n\n<i>Open the live view, do it there, then press Done. What you type there goes to the page only.</i>"
}

// handoffButtons are a private chat's message's buttons with the view's
// link url, a Mini App.
func handoffButtons(url string) [][]Button {
	return [][]Button{
		{{Label: "🌐 Open the browser", URL: url, WebApp: true}},
		{{Label: "✅ Done", Choice: choiceHandoffDone}, {Label: "🔄 New link", Choice: choiceHandoffRelink}},
	}
}

// handoffOutcome is the line the message ends with.
func handoffOutcome(o session.HandoffOutcome, timeout time.Duration) string {
	switch o {
	case session.HandoffDone:
		return "✅ Done: I take it from here."
	case session.HandoffTimeout:
		return "⌛ Nobody pressed Done within " + session.DurationText(timeout) + "."
	}
	return "⏹ Stopped."
}

// editButtons replaces a posed question's buttons (a new link), queued on
// the chat's sender.
func (c *Chat) editButtons(ctx context.Context, ps *posed, rows [][]Button) {
	place, msgID, kb := ps.place, ps.msgID, ps.p.keyboard(rows)
	c.tg.Submit(context.WithoutCancel(ctx), place.Chat, "editMessageReplyMarkup", telegram.Paced, "", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.doneTimeout)
		defer cancel()
		_, err := c.tg.API().EditMessageReplyMarkup(ctx, &tgbot.EditMessageReplyMarkupParams{ChatID: place.Chat, MessageID: msgID, ReplyMarkup: kb})
		if err != nil {
			c.log.Warn("hand-off link not replaced", "chat", place, "err", c.scrub(err.Error()))
		}
		return err
	})
}
