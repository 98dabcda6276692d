package bot

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Streamed answers. The session gives the activity the answer's text as
// it is written (Stream) and, at the end, the answer (Answer). The activity
// shows the text in one place, at most once per streamEvery and not before
// streamFirst has passed since its first text (an answer done by then is
// sent as it always was, without a stream):
//
//   - in a private chat, as a draft (sendMessageDraft, Bot API 9.3): the
//     user sees the message being written; the answer then arrives as an
//     ordinary message, which replaces the draft. When the API refuses
//     drafts (an older Bot API, or a chat that cannot have them), the bot
//     stops using them and edits a message instead.
//   - elsewhere, in one message sent with the first text and edited in
//     place; the answer's first part is the last edit (the rest, beyond
//     Telegram's 4096, follow as messages, as ever).
//
// Every update goes through the chat's paced sender under one key, so
// updates that wait behind a 429 or the flood limits are coalesced: the
// newest text wins. The answer itself goes under that key too: it takes
// the place of an update still waiting, so when the queues are behind (a
// burst of chats against the 30 messages a second) an answer whose stream
// had not gone out yet is sent once, as a message, not as a message and an
// edit. The text is rendered with tgformat.RenderPartial, so
// an unfinished construct never breaks the HTML; while the text is longer
// than one message, the first part is shown. A stopped or failed turn
// keeps what was shown (a draft is sent as a message): nothing is lost.

// answerReq is an Answer waiting for the activity's goroutine.
type answerReq struct {
	ctx      context.Context
	markdown string
	done     chan error
}

// live is the streamed answer of an activity; its goroutine owns it. Its
// updates do not wait for Telegram: each is queued under the stream's key
// (replacing one still queued), and the one that goes out first sends the
// message the others edit.
type live struct {
	a       *activity
	id      int64 // the stream's, unique in the bot: its keys and its draft id
	draftID int64 // drafts while not 0
	// gen names the streamed message of this step (its key); a step whose
	// text is taken down leaves its message to the queued delete.
	gen     int
	msg     *atomic.Int64 // the message's id once sent, set by the update that sent it
	started time.Time
	last    time.Time // of the last update
	shown   string    // the HTML of the last update
	timer   *time.Timer
	due     <-chan time.Time
	result  <-chan error // the outcome of the last queued update
	// drafts is the context of the queued drafts, cancelled when the
	// answer is sent (a late draft would show over it).
	drafts      context.Context
	cancelDraft context.CancelFunc
	done        bool // answered or finished
}

func newLive(a *activity) *live {
	l := &live{a: a, id: a.c.streamSeq.Add(1), msg: new(atomic.Int64)}
	if a.place.Chat > 0 && a.c.streamDrafts && !a.c.noDrafts.Load() {
		l.draftID = l.id
	}
	l.drafts, l.cancelDraft = context.WithCancel(context.WithoutCancel(a.parent))
	return l
}

// key is the sender key of the stream's updates.
func (l *live) key() string {
	if l.draftID != 0 {
		return "draft-" + strconv.FormatInt(l.id, 10)
	}
	return "stream-" + strconv.FormatInt(l.id, 10) + "-" + strconv.Itoa(l.gen)
}

// stop ends the timer (the goroutine's end).
func (l *live) stop() {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.due = nil
	l.cancelDraft()
}

// changed runs when Stream gave new text: it schedules an update, or takes
// down what was shown when the text is "".
func (l *live) changed() {
	if l.done {
		return
	}
	text := l.a.streamText()
	if text == "" {
		l.takeDown()
		return
	}
	if l.a.ctx.Err() != nil {
		return // stopped: finish shows the last text
	}
	now := time.Now()
	if l.started.IsZero() {
		l.started = now
	}
	if l.due != nil {
		return // an update is scheduled: it takes this text
	}
	at := l.started.Add(l.a.c.streamFirst)
	if !l.last.IsZero() {
		at = l.last.Add(l.a.c.streamEvery)
	}
	l.schedule(at.Sub(now))
}

func (l *live) schedule(d time.Duration) {
	if l.timer == nil {
		l.timer = time.NewTimer(max(d, 0))
	} else {
		l.timer.Reset(max(d, 0))
	}
	l.due = l.timer.C
}

// takeDown removes what was shown of a step that was not the answer: a
// queued update of its message is replaced by the message's deletion (so a
// message not sent yet never is).
func (l *live) takeDown() {
	if l.due != nil {
		l.timer.Stop()
		l.due = nil
	}
	shown := !l.last.IsZero()
	l.started, l.last, l.shown = time.Time{}, time.Time{}, ""
	if !shown || l.draftID != 0 {
		return // a draft goes by itself when the next text or message comes
	}
	c, place, msg := l.a.c, l.a.place, l.msg
	_ = c.tg.Submit(context.WithoutCancel(l.a.parent), place.Chat, "deleteMessage", telegram.Unpaced, l.key(), func(ctx context.Context) error {
		id := msg.Load()
		if id == 0 {
			return nil
		}
		_, err := c.tg.API().DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: place.Chat, MessageID: int(id)})
		return err
	})
	l.gen++
	l.msg = new(atomic.Int64)
	l.result = nil
}

// show queues the update that is due.
func (l *live) show() {
	l.due = nil
	if l.done || l.a.ctx.Err() != nil {
		return
	}
	chunks := tgformat.RenderPartial(l.a.streamText())
	if len(chunks) == 0 || chunks[0].HTML == l.shown {
		return
	}
	ch := chunks[0]
	c, place := l.a.c, l.a.place
	l.last, l.shown = time.Now(), ch.HTML
	if l.draftID != 0 {
		draft := strconv.FormatInt(l.draftID, 10)
		text, mode := body(ch)
		l.result = c.tg.Submit(l.drafts, place.Chat, "sendMessageDraft", telegram.Paced, l.key(), func(ctx context.Context) error {
			_, err := c.tg.API().SendMessageDraft(ctx, &tgbot.SendMessageDraftParams{ChatID: place.Chat, MessageThreadID: place.Topic, DraftID: draft, Text: text, ParseMode: mode})
			return err
		})
		return
	}
	l.result = c.tg.Submit(context.WithoutCancel(l.a.parent), place.Chat, "editMessageText", telegram.Paced, l.key(), c.upsert(place, l.msg, ch))
}

// body is what a message shows of ch: its HTML, or its text when it has
// no markup.
func body(ch tgformat.Chunk) (string, models.ParseMode) {
	if ch.HTML == "" {
		return ch.Text, ""
	}
	return ch.HTML, models.ParseModeHTML
}

// upsert is a call (run by the sender) that shows ch in the message msg
// holds: an edit once it was sent, else the send, which sets msg. HTML
// Telegram refuses goes again as plain text; a message the user deleted is
// sent anew.
func (c *Chat) upsert(place chat.Place, msg *atomic.Int64, ch tgformat.Chunk) func(context.Context) error {
	try := func(ctx context.Context, text string, mode models.ParseMode) error {
		if id := msg.Load(); id != 0 {
			_, err := c.tg.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{
				ChatID: place.Chat, MessageID: int(id), Text: text, ParseMode: mode, LinkPreviewOptions: noPreview,
			})
			if notModified(err) {
				return nil
			}
			return err
		}
		m, err := c.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: place.Chat, MessageThreadID: place.Topic, Text: text, ParseMode: mode, LinkPreviewOptions: noPreview})
		if err == nil {
			msg.Store(int64(m.ID))
		}
		return err
	}
	return func(ctx context.Context) error {
		text, mode := body(ch)
		err := try(ctx, text, mode)
		if err != nil && telegram.StatusOf(err) == http.StatusBadRequest && msg.Load() != 0 && gone(err) {
			msg.Store(0)
			err = try(ctx, text, mode)
		}
		if err != nil && telegram.StatusOf(err) == http.StatusBadRequest && mode != "" && ch.Text != "" {
			c.log.Warn("Telegram refused the HTML; sending plain text", "chat", place, "err", err.Error())
			err = try(ctx, ch.Text, "")
		}
		return err
	}
}

// outcome handles the answer to the last queued update.
func (l *live) outcome(err error) {
	l.result = nil
	if err == nil || l.done || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	c, place := l.a.c, l.a.place
	status := telegram.StatusOf(err)
	if l.draftID != 0 && (status == http.StatusBadRequest || status == http.StatusForbidden || status == http.StatusNotFound) {
		// No drafts here: from now on, a message edited in place.
		c.log.Info("Telegram refused a draft; streaming by editing a message instead", "chat", place, "err", err.Error())
		c.noDrafts.Store(true)
		l.draftID = 0
		l.shown = ""
		if l.due == nil {
			l.schedule(0)
		}
		return
	}
	c.log.Debug("streamed update failed", "chat", place, "err", err.Error())
}

// answer delivers the final answer: the streamed message becomes its first
// part (a draft gives way to the answer's messages).
func (l *live) answer(ctx context.Context, markdown string) error {
	return l.end(ctx, tgformat.Render(markdown))
}

// finish keeps what was streamed of an answer that did not come (the
// turn was stopped, or the model failed): the message shows all of it, a
// draft becomes a message.
func (l *live) finish() {
	if l.done {
		return
	}
	text := l.a.streamText()
	if text == "" {
		l.done = true
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.a.parent), l.a.c.doneTimeout)
	defer cancel()
	if err := l.end(ctx, tgformat.RenderPartial(text)); err != nil {
		l.a.c.log.Warn("streamed answer not kept", "chat", l.a.place, "err", err.Error())
	}
}

// end sends chunks as the answer: the first under the stream's key — in
// place of an update still queued, in the streamed message (sent now if no
// update sent it yet) or, after drafts, as a message — and the others as
// messages.
func (l *live) end(ctx context.Context, chunks []tgformat.Chunk) error {
	l.done = true
	if l.due != nil {
		l.timer.Stop()
		l.due = nil
	}
	c, place := l.a.c, l.a.place
	if l.last.IsZero() || len(chunks) == 0 {
		l.cancelDraft()
		return c.sendChunks(ctx, place, chunks)
	}
	msg := l.msg
	if l.draftID != 0 {
		msg = new(atomic.Int64) // the answer is a new message
	}
	err := c.tg.Wait(ctx, "sendMessage", c.tg.Submit(ctx, place.Chat, "sendMessage", telegram.Paced, l.key(), c.upsert(place, msg, chunks[0])))
	l.cancelDraft()
	var errs []error
	if err != nil {
		c.log.Error("message not delivered", "chat", place, "part", 1, "of", len(chunks), "err", err.Error())
		if ctx.Err() != nil {
			return &chat.PartlySentError{Sent: 0, Err: err}
		}
		errs = append(errs, err)
	}
	if len(chunks) > 1 {
		rest := c.sendChunks(ctx, place, chunks[1:])
		if ps := (*chat.PartlySentError)(nil); errors.As(rest, &ps) {
			return &chat.PartlySentError{Sent: 1 + ps.Sent, Err: errors.Join(append(errs, ps.Err)...)}
		}
		errs = append(errs, rest)
	}
	return errors.Join(errs...)
}

// notModified is Telegram's answer to an edit that changes nothing.
func notModified(err error) bool {
	return err != nil && telegram.StatusOf(err) == http.StatusBadRequest && strings.Contains(err.Error(), "message is not modified")
}

// gone is Telegram's answer to an edit of a message that is no more.
func gone(err error) bool {
	return strings.Contains(err.Error(), "message to edit not found")
}
