package bot

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// A group's hand-off. The link opens the chat's browser, logged in as the
// turn's user may be: whoever holds it holds the tab. So it never goes to
// the group, where every member would see it and the first to open it
// would win. It goes to the turn's user in their private chat with the
// bot, as a Mini App, whose page proves with Telegram's signed initData
// that its viewer is that user (or one of the bot's admins: the live view
// checks). The group's message keeps the reason, says where the link went
// (or why it could not go: the user never started the bot, or blocked
// it), and has Done and New link for the turn's user or an admin. New link
// voids the old link and sends the new one to the private chat of whoever
// pressed it: the turn's user, or an admin taking over. Both messages
// close with the outcome.

// groupHandoff is one group hand-off's two messages and where its link is.
type groupHandoff struct {
	c     *Chat
	place chat.Place
	p     session.HandoffPrompt
	group *posed
	// private is the private message that holds the live link, nil when
	// none does (the send failed, or not tried); to is whose chat it is in.
	private *posed
	to      int64
	// failed is why the last private send failed (nil: it did not).
	failed error
}

// showGroupHandoff is ShowHandoff in a group (place.Chat < 0).
func (c *Chat) showGroupHandoff(ctx context.Context, place chat.Place, p session.HandoffPrompt) (session.HandoffOutcome, error) {
	h := &groupHandoff{c: c, place: place, p: p}
	if p.UserID != 0 {
		h.sendPrivate(ctx, p.UserID, p.Live.URL())
	}
	q := Question{Text: h.groupText(), HTML: true, Buttons: h.groupButtons(), Refusal: handoffRefusal,
		MayAnswer: func(user int64) bool { return user == p.UserID || (c.isAdmin != nil && c.isAdmin(user)) }}
	if err := q.check(); err != nil {
		h.closePrivate(ctx, handoffOutcome(session.HandoffStopped, p.Timeout))
		return session.HandoffStopped, err
	}
	ps, err := c.pose(ctx, place, q, true)
	if err != nil {
		h.closePrivate(ctx, handoffOutcome(session.HandoffStopped, p.Timeout))
		return session.HandoffStopped, err
	}
	h.group = ps
	defer c.asks.close(ps.p)
	o := h.wait(ctx)
	c.asks.close(ps.p)
	line := handoffOutcome(o, p.Timeout)
	h.closePrivate(ctx, line)
	c.closeWith(ctx, ps, line)
	return o, nil
}

// wait runs the hand-off until it ends: presses in the group and in the
// private chat, the view's Done, the timeout, ctx's end.
func (h *groupHandoff) wait(ctx context.Context) session.HandoffOutcome {
	var timeout <-chan time.Time
	if h.p.Timeout > 0 {
		t := time.NewTimer(h.p.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	for {
		var private <-chan Answer // nil (never ready) without a private message
		if h.private != nil {
			private = h.private.p.answer
		}
		var a Answer
		select {
		case a = <-h.group.p.answer:
		case a = <-private:
		case <-h.p.Live.Done():
			return h.p.Live.Outcome()
		case <-timeout:
			h.p.Live.End(session.HandoffTimeout)
			continue
		case <-ctx.Done():
			h.p.Live.End(session.HandoffStopped)
			continue
		}
		if a.Choice == choiceHandoffDone {
			h.p.Live.End(session.HandoffDone)
			continue
		}
		h.relink(ctx, a.UserID)
	}
}

// relink voids the link and sends a new one to user's private chat: the
// message there gets the new link, or, when the link was elsewhere, that
// message is closed and user gets one of their own. The group's message
// says where it went.
func (h *groupHandoff) relink(ctx context.Context, user int64) {
	u := h.p.Live.Relink()
	if u == "" {
		return // ended meanwhile
	}
	if h.private != nil && h.to == user {
		h.c.editButtons(ctx, h.private, h.privateButtons(u))
		return
	}
	h.closePrivate(ctx, "🔄 This link was replaced by a new one.")
	h.sendPrivate(ctx, user, u)
	if text := h.groupText(); text != h.group.text { // unchanged: Telegram refuses the edit
		h.c.editQuestion(ctx, h.group, text, h.groupButtons())
	}
}

// sendPrivate sends the link to user's private chat; h.failed says why it
// did not go.
func (h *groupHandoff) sendPrivate(ctx context.Context, user int64, url string) {
	q := Question{Text: h.privateText(), HTML: true, Buttons: h.privateButtons(url),
		MayAnswer: func(u int64) bool { return u == user }, Refusal: handoffRefusal}
	ps, err := h.c.pose(ctx, chat.In(user), q, true)
	h.private, h.to, h.failed = ps, user, err
	if err != nil {
		h.private = nil
	}
}

// closePrivate closes the private message (if any) with line.
func (h *groupHandoff) closePrivate(ctx context.Context, line string) {
	if h.private == nil {
		return
	}
	h.c.asks.close(h.private.p)
	h.c.closeWith(ctx, h.private, line)
	h.private = nil
}

// unreachable reports whether err is Telegram refusing a private chat the
// bot may not write to: the user never started it (403 "bot can't initiate
// conversation"), blocked it (403), or is unknown to it (400 "chat not
// found").
func unreachable(err error) bool {
	switch telegram.StatusOf(err) {
	case http.StatusForbidden:
		return true
	case http.StatusBadRequest:
		return strings.Contains(strings.ToLower(err.Error()), "chat not found")
	}
	return false
}

// mention names user in a group's message without telling more of them
// than the group knows: a link to the user by id, labelled with words of
// the bot's (never their name or @username, which the bot would have to
// keep).
func mention(user int64, label string) string {
	return fmt.Sprintf(`<a href="tg://user?id=%d">%s</a>`, user, html.EscapeString(label))
}

// groupText is the group's message (Telegram HTML): the reason, and where
// the link is — or why it is not, and what to do.
func (h *groupHandoff) groupText() string {
	head := "🖐 <b>A hand in the browser, please</b>\n" + html.EscapeString(h.p.Reason) + "\n\n"
	who := "the person who asked"
	if h.to != h.p.UserID {
		who = "the admin who asked for a new link"
	}
	var tail string
	switch {
	case h.to == 0:
		tail = "Nobody can get the link here. The person who asked or an admin: press New link to get it in a private chat with me."
	case h.failed == nil:
		return head + "<i>I sent the link to the live view to " + mention(h.to, who) +
			" in a private chat with me: open it there, do it, then press Done (there or here). Links are never posted in a group: anyone here could open them.</i>"
	case unreachable(h.failed):
		return head + "<i>⚠️ I could not send the link to " + mention(h.to, who) +
			" in a private chat: they have not started one with me, or blocked me. " + h.startHint() + "</i>"
	default:
		tail = "⚠️ I could not send the link in a private chat (Telegram did not take it). Press New link to try again."
	}
	return head + "<i>" + html.EscapeString(tail) + "</i>"
}

// startHint says how to start a private chat with the bot.
func (h *groupHandoff) startHint() string {
	if name := h.c.botUsername(); name != "" {
		return fmt.Sprintf(`Open <a href="https://t.me/%s">@%s</a>, press Start, then press New link here.`, name, html.EscapeString(name))
	}
	return "Open a private chat with me, press Start, then press New link here."
}

// groupButtons are the group message's: Done and New link; never the link.
func (h *groupHandoff) groupButtons() [][]Button {
	return [][]Button{{{Label: "✅ Done", Choice: choiceHandoffDone}, {Label: "🔄 New link", Choice: choiceHandoffRelink}}}
}

// privateText is the private message (Telegram HTML): which group (and
// topic) the hand-off is for, and the reason.
func (h *groupHandoff) privateText() string {
	group, topic := h.c.names.of(h.place)
	where := "a group"
	if group != "" {
		where = "the group <b>" + html.EscapeString(group) + "</b>"
	}
	switch {
	case topic != "":
		where += ", topic <b>" + html.EscapeString(topic) + "</b>"
	case h.place.Topic != 0:
		where += ", one of its topics"
	}
	return "🖐 <b>Your turn in the browser</b> for " + where + "\n" + html.EscapeString(h.p.Reason) +
		"\n\n<i>Open the live view, do it there, then press Done. What you type there goes to the page only. This link is for you alone: do not forward it.</i>"
}

// privateButtons are the private message's: the Mini App, Done, New link.
func (h *groupHandoff) privateButtons(url string) [][]Button {
	return [][]Button{
		{{Label: "🌐 Open the browser", URL: url, WebApp: true}},
		{{Label: "✅ Done", Choice: choiceHandoffDone}, {Label: "🔄 New link", Choice: choiceHandoffRelink}},
	}
}

// editQuestion replaces a posed question's text (Telegram HTML, as it was
// posed) and buttons, queued on the chat's sender.
func (c *Chat) editQuestion(ctx context.Context, ps *posed, text string, rows [][]Button) {
	ps.text = text
	place, msgID, mode, kb := ps.place, ps.msgID, ps.mode, ps.p.keyboard(rows)
	c.tg.Submit(context.WithoutCancel(ctx), place.Chat, "editMessageText", telegram.Paced, "", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.doneTimeout)
		defer cancel()
		_, err := c.tg.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: place.Chat, MessageID: msgID, Text: text, ParseMode: mode, LinkPreviewOptions: noPreview, ReplyMarkup: kb,
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			c.log.Warn("hand-off message not updated", "chat", place, "err", c.scrub(err.Error()))
		}
		return err
	})
}
