package bot

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// User-facing texts of the update handling.
const (
	panicReply   = "Sorry, something went wrong with that message. The operator has the details in the log."
	mediaReply   = "I can read text, voice notes, photos and files, but not this kind of message: please write your request as text."
	fileReply    = "Sorry, I could not receive that file. Please try again in a moment."
	emptyReply   = "Yes? Write your request after the mention, or send /help."
	deliverReply = "Sorry, I can't take messages right now. Please try again in a moment."
)

// replyTimeout bounds a short reply sent outside a chat job (after a
// panic).
const replyTimeout = 30 * time.Second

// handleMessage runs on the chat's worker: route, allowlist, then the
// command or the session. keys are the inbox entries of the updates the
// message came in; it
// reports whether it handed them on (to the session, or to an album still
// collecting), which then marks them done in the inbox; otherwise the
// caller does. replayed: the message was kept from the last run, and a
// command is not run again.
func (b *Bot) handleMessage(ctx context.Context, m *models.Message, keys []int64, replayed bool) (kept bool) {
	b.chat.names.note(m) // before the topic's root is taken off: it names the topic
	if b.onTopicService(ctx, m) {
		return false
	}
	m = withoutTopicRoot(m)
	r := routeMessage(m, b.me)
	if r.kind == routeIgnore && m.MediaGroupID != "" && b.albums.has(placeOf(m), m.MediaGroupID) {
		// A later part of an album addressed to us: in a group only the
		// first part carries the caption with the mention.
		r = route{kind: routeFiles}
	}
	if r.kind == routeIgnore {
		return false
	}
	place, userID := placeOf(m), m.From.ID
	b.chat.topicAlive(place)
	if !b.access.allows(userID) {
		if b.access.shouldRefuse(userID) {
			b.refuse(ctx, place, m.From)
		} else {
			b.log.Debug("a stranger's message dropped: refused already in the last 10 minutes", "user", userID, "chat", place)
		}
		return false
	}
	if r.kind != routeFiles || m.MediaGroupID == "" {
		// Anything else in the chat completes a pending album.
		b.deliverAlbum(ctx, place, b.albums.take(place, ""))
	}
	switch r.kind {
	case routeCommand:
		if replayed {
			b.log.Info("a command sent before the restart is not run again", "chat", place, "command", r.cmd.Name)
			return false
		}
		b.command(ctx, place, userID, m.Chat.Type != models.ChatTypePrivate, r.cmd)
	case routeVoice:
		return b.onVoice(ctx, m, r, keys)
	case routeMedia:
		b.reply(ctx, place, mediaReply)
	case routeEmpty:
		b.reply(ctx, place, emptyReply)
	case routeText:
		if !replayed && b.finishLogin(ctx, place, userID, r.text) {
			return false // the login's answer: never the model's
		}
		// An answer to a server's question, for the server alone. A message
		// kept from the last run was not one: the forms of that run were
		// cancelled when it stopped.
		if !replayed && b.chat.forms.offer(place, userID, displayName(*m.From), r.text) {
			return false
		}
		return b.deliver(ctx, place, userID, withReplyContext(m, b.me, r.text), nil, keys)
	case routeFiles:
		files, err := b.attachments(ctx, m)
		switch {
		case errors.Is(err, telegram.ErrTooBig):
			reply, note := tooBigTexts(tooBigLimit(err))
			b.reply(ctx, place, reply)
			if r.text != "" { // the words still go, with a note of what did not
				return b.deliver(ctx, place, userID, withReplyContext(m, b.me, r.text)+"\n"+note, nil, keys)
			}
		case err != nil:
			b.fileFailed(ctx, place, "a file", err)
		case m.MediaGroupID != "":
			// Photos sent together arrive one by one: collect them and
			// deliver the album as one message when it is complete.
			b.deliverAlbum(ctx, place, b.albums.add(place, userID, m.MediaGroupID, r.text, files, keys))
			return true
		default:
			return b.deliver(ctx, place, userID, withReplyContext(m, b.me, r.text), files, keys)
		}
	}
	return false
}

// deliver hands a message to the session and reports whether it took it:
// the session then marks its updates done in the inbox when it no longer
// needs them. When the sessions are closing the message stays in the inbox
// for the next start, without a word to the chat.
func (b *Bot) deliver(ctx context.Context, place chat.Place, userID int64, text string, files []session.Attachment, keys []int64) bool {
	err := b.sessions.Deliver(place, session.Message{Text: text, Files: files, From: userID, Taken: func() { b.tg.Done(keys...) }})
	switch {
	case err == nil:
		return true
	case errors.Is(err, session.ErrClosed) && b.tg.Journaling():
		b.log.Info("stopping: the message is kept for the next start", "chat", place)
		return true
	}
	b.log.Error("deliver a message", "chat", place, "err", errText(b.scrub, err))
	b.reply(ctx, place, deliverReply)
	return false
}

// runJob runs one job of a chat's worker; a panic is logged and answered,
// and the worker goes on with the next job.
func (b *Bot) runJob(ctx context.Context, place chat.Place, job func(context.Context)) {
	if b.safely(place, func() { job(ctx) }) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replyTimeout)
		defer cancel()
		b.reply(rctx, place, panicReply)
	}
}

// safely runs fn and reports whether it panicked (the panic is logged with
// its stack).
func (b *Bot) safely(place chat.Place, fn func()) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			b.log.Error("panic while handling an update", "chat", place,
				"panic", b.scrub(fmt.Sprint(r)), "stack", b.scrub(string(debug.Stack())))
		}
	}()
	fn()
	return false
}
