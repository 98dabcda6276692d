package bot

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/bot/tgformat"
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
// newest text wins. The text is rendered with tgformat.RenderPartial, so
// an unfinished construct never breaks the HTML; while the text is longer
// than one message, the first part is shown. A stopped or failed turn
// keeps what was shown (a draft is sent as a message): nothing is lost.

// answerReq is an Answer waiting for the activity's goroutine.
type answerReq struct {
	ctx      context.Context
	markdown string
	done     chan error
}

// live is the streamed answer of an activity; its goroutine owns it.
type live struct {
	a       *activity
	draftID int64 // drafts while not 0
	msgID   int   // the message edited in place; 0: none yet
	started time.Time
	last    time.Time // of the last update
	shown   string    // the text of the last update
	plain   bool      // Telegram refused the HTML: updates are plain text
	timer   *time.Timer
	due     <-chan time.Time
	result  <-chan error // the outcome of the last queued update
	// drafts is the context of the queued drafts, cancelled when the
	// answer is sent (a late draft would show over it).
	drafts      context.Context
	cancelDraft context.CancelFunc
	done        bool // answered or finished
}

const (
	streamKeyEdit  = "stream-edit"
	streamKeyDraft = "stream-draft"
)

func newLive(a *activity) *live {
	l := &live{a: a}
	if a.chatID > 0 && a.c.streamDrafts && !a.c.noDrafts.Load() {
		l.draftID = a.c.draftSeq.Add(1)
	}
	l.drafts, l.cancelDraft = context.WithCancel(context.WithoutCancel(a.parent))
	return l
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

// takeDown removes what was shown of a step that was not the answer.
func (l *live) takeDown() {
	if l.due != nil {
		l.timer.Stop()
		l.due = nil
	}
	l.started, l.last, l.shown = time.Time{}, time.Time{}, ""
	if l.msgID == 0 {
		return // a draft goes by itself when the next text or message comes
	}
	id, c, chat := l.msgID, l.a.c, l.a.chatID
	l.msgID = 0
	ctx := context.WithoutCancel(l.a.parent)
	_ = c.out.submit(ctx, chat, "deleteMessage", unpaced, "", func(ctx context.Context) error {
		_, err := c.tg.DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: chat, MessageID: id})
		return err
	})
}

// show sends the update that is due.
func (l *live) show() {
	l.due = nil
	if l.done || l.a.ctx.Err() != nil {
		return
	}
	chunks := tgformat.RenderPartial(l.a.streamText())
	if len(chunks) == 0 {
		return
	}
	text, mode := l.body(chunks[0])
	if text == l.shown {
		return
	}
	c, chat := l.a.c, l.a.chatID
	l.last, l.shown = time.Now(), text
	switch {
	case l.draftID != 0:
		draft := strconv.FormatInt(l.draftID, 10)
		l.result = c.out.submit(l.drafts, chat, "sendMessageDraft", paced, streamKeyDraft, func(ctx context.Context) error {
			_, err := c.tg.SendMessageDraft(ctx, &tgbot.SendMessageDraftParams{ChatID: chat, DraftID: draft, Text: text, ParseMode: mode})
			return err
		})
	case l.msgID == 0:
		// The message to edit: sent and waited for (its id is needed),
		// neither /stop nor Done cutting it short.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(l.a.parent), c.doneTimeout)
		defer cancel()
		m, err := c.sendMessage(ctx, chat, text, mode)
		if err != nil && mode != "" && statusOf(err) == http.StatusBadRequest {
			l.plain = true
			text, mode = l.body(chunks[0])
			l.shown = text
			m, err = c.sendMessage(ctx, chat, text, mode)
		}
		if err != nil {
			c.log.Debug("streamed message not sent", "chat", chat, "err", err.Error())
			l.shown = ""
			return
		}
		l.msgID = m.ID
	default:
		l.result = c.out.submit(context.WithoutCancel(l.a.parent), chat, "editMessageText", paced, streamKeyEdit, l.edit(l.msgID, text, mode))
	}
}

// body is what an update shows of chunk: its HTML, or its text once
// Telegram refused the HTML.
func (l *live) body(ch tgformat.Chunk) (string, models.ParseMode) {
	if l.plain || ch.HTML == "" {
		return ch.Text, ""
	}
	return ch.HTML, models.ParseModeHTML
}

func (l *live) edit(id int, text string, mode models.ParseMode) func(context.Context) error {
	c, chat := l.a.c, l.a.chatID
	return func(ctx context.Context) error {
		_, err := c.tg.EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: chat, MessageID: id, Text: text, ParseMode: mode, LinkPreviewOptions: noPreview,
		})
		if notModified(err) {
			return nil
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
	c, chat := l.a.c, l.a.chatID
	status := statusOf(err)
	switch {
	case l.draftID != 0 && (status == http.StatusBadRequest || status == http.StatusForbidden || status == http.StatusNotFound):
		// No drafts here: from now on, a message edited in place.
		c.log.Info("Telegram refused a draft; streaming by editing a message instead", "chat", chat, "err", err.Error())
		c.noDrafts.Store(true)
		l.draftID = 0
	case l.draftID == 0 && status == http.StatusBadRequest && !l.plain:
		c.log.Warn("Telegram refused the streamed HTML; streaming plain text", "chat", chat, "err", err.Error())
		l.plain = true
	default:
		c.log.Debug("streamed update failed", "chat", chat, "err", err.Error())
		return
	}
	l.shown = ""
	if l.due == nil {
		l.schedule(0)
	}
}

// answer delivers the final answer: the streamed message becomes its first
// part (a draft gives way to the answer's messages).
func (l *live) answer(ctx context.Context, markdown string) error {
	chunks := tgformat.Render(markdown)
	return l.end(ctx, chunks)
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
		l.a.c.log.Warn("streamed answer not kept", "chat", l.a.chatID, "err", err.Error())
	}
}

// end sends chunks as the answer: the first in the streamed message when
// there is one, the others (or all) as messages.
func (l *live) end(ctx context.Context, chunks []tgformat.Chunk) error {
	l.done = true
	if l.due != nil {
		l.timer.Stop()
		l.due = nil
	}
	l.cancelDraft()
	c, chat := l.a.c, l.a.chatID
	if l.msgID == 0 || len(chunks) == 0 {
		return c.sendChunks(ctx, chat, chunks)
	}
	first := chunks[0]
	text, mode := l.body(first)
	// Under the stream's key: a partial edit still queued is replaced.
	err := c.out.wait(ctx, "editMessageText", c.out.submit(ctx, chat, "editMessageText", paced, streamKeyEdit, l.edit(l.msgID, text, mode)))
	if err != nil && mode != "" && statusOf(err) == http.StatusBadRequest && first.Text != "" {
		c.log.Warn("Telegram refused the HTML; editing in plain text", "chat", chat, "err", err.Error())
		err = c.out.do(ctx, chat, "editMessageText", paced, l.edit(l.msgID, first.Text, ""))
	}
	if err != nil && statusOf(err) == http.StatusBadRequest {
		// The message is gone (deleted by the user): send the part anew.
		err = c.sendChunk(ctx, chat, first)
	}
	var errs []error
	if err != nil {
		c.log.Error("message not delivered", "chat", chat, "part", 1, "of", len(chunks), "err", err.Error())
		errs = append(errs, err)
	}
	if len(chunks) > 1 {
		errs = append(errs, c.sendChunks(ctx, chat, chunks[1:]))
	}
	return errors.Join(errs...)
}

// notModified is Telegram's answer to an edit that changes nothing.
func notModified(err error) bool {
	return err != nil && statusOf(err) == http.StatusBadRequest && strings.Contains(err.Error(), "message is not modified")
}
