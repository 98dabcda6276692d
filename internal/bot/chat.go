package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Chat is the session's chat port on Telegram: it renders and sends
// answers, uploads files, and shows typing and progress while a turn runs.
// Its methods are safe for concurrent use.
type Chat struct {
	tg   *telegram.Client // every call to Telegram
	asks *questions
	// forms are the servers' questions open in the chats (Elicit).
	forms *forms
	// isAdmin says whether a user is one of the bot's admins.
	isAdmin func(int64) bool
	// username is the bot's (getMe), once Run learned it: links to a
	// private chat with the bot (t.me/<username>).
	username atomic.Pointer[string]
	// names are the groups' and topics' titles seen (place_names.go).
	names *placeNames
	log   *slog.Logger
	scrub func(string) string

	typingEvery   time.Duration // the typing action lasts ~5 s
	progressEvery time.Duration // at most one progress edit per this
	doneTimeout   time.Duration // bounds a call the turn's end may not cut (the progress message, a question)

	// Streamed answers (stream.go).
	streamFirst  time.Duration // the first update, after the first text
	streamEvery  time.Duration // at most one update per this
	streamDrafts bool          // drafts in private chats
	speaker      Speaker       // reads answers aloud (voice_out.go); nil: none
	noDrafts     atomic.Bool   // Telegram refused a draft: edits only
	streamSeq    atomic.Int64  // numbers the streams (their keys, draft ids)
	// topics end the sessions of forum topics deleted or closed
	// (topic_gone.go).
	topics topicEnds
}

// ChatOptions configure a Chat.
type ChatOptions struct {
	// Telegram is the client every call is made with; required.
	Telegram *telegram.Client
	// Admins are the bot's admins (Options.Admins): only they may answer
	// what only admins may (approvals in groups).
	Admins []int64
	// NoDrafts streams answers by editing a message in every chat, never
	// with sendMessageDraft (which private chats otherwise get while the
	// Bot API takes it).
	NoDrafts bool
	Logger   *slog.Logger
	// Speaker reads answers aloud for the chats that asked (/voice,
	// voice_out.go); nil: none can.
	Speaker Speaker
}

// NewChat returns the chat port on o.Telegram, to hand to the sessions
// and then to New (Options.Chat). It does no I/O.
func NewChat(o ChatOptions) *Chat {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	admins := newAccess(nil, o.Admins)
	return &Chat{
		tg: o.Telegram, log: log.With("component", "bot"), scrub: o.Telegram.Scrub,
		isAdmin: admins.isAdmin, asks: newQuestions(), forms: newForms(), names: newPlaceNames(),
		typingEvery:   4 * time.Second,
		progressEvery: time.Second,
		doneTimeout:   10 * time.Second,
		streamFirst:   time.Second,
		streamEvery:   time.Second,
		streamDrafts:  !o.NoDrafts,
		speaker:       o.Speaker,
	}
}

// setUsername keeps the bot's username (Run, after getMe).
func (c *Chat) setUsername(name string) { c.username.Store(&name) }

// botUsername is the bot's username, "" before Run learned it.
func (c *Chat) botUsername() string {
	if p := c.username.Load(); p != nil {
		return *p
	}
	return ""
}

var noPreview = &models.LinkPreviewOptions{IsDisabled: tgbot.True()}

// SendText renders the model's Markdown and sends it, one message per
// chunk, as HTML with link previews off. A chunk Telegram refuses (a 400,
// such as "can't parse entities") is sent again as plain text. Failures
// are logged with the chat id and returned.
func (c *Chat) SendText(ctx context.Context, place chat.Place, markdown string) error {
	return c.sendChunks(ctx, place, tgformat.Render(markdown))
}

// SendTextFrom sends the messages SendText would send for markdown from
// the index from on: the rest of an answer whose first messages reached
// the chat before a shutdown (chat.PartlySentError).
func (c *Chat) SendTextFrom(ctx context.Context, place chat.Place, markdown string, from int) error {
	chunks := tgformat.Render(markdown)
	if from >= len(chunks) {
		return nil
	}
	return c.sendChunks(ctx, place, chunks[max(from, 0):])
}

// sendChunks sends chunks as messages, in order. A failed one is logged
// and the next is tried, until ctx ends: the error then says how many
// were handed to Telegram before (chat.PartlySentError).
func (c *Chat) sendChunks(ctx context.Context, place chat.Place, chunks []tgformat.Chunk) error {
	var errs []error
	for i, ch := range chunks {
		if err := c.sendChunk(ctx, place, ch); err != nil {
			c.log.Error("message not delivered", "chat", place, "part", i+1, "of", len(chunks), "err", err.Error())
			errs = append(errs, err)
			if ctx.Err() != nil {
				return &chat.PartlySentError{Sent: i, Err: errors.Join(errs...)}
			}
		}
	}
	return errors.Join(errs...)
}

func (c *Chat) sendChunk(ctx context.Context, place chat.Place, ch tgformat.Chunk) error {
	if ch.HTML != "" {
		_, err := c.sendMessage(ctx, place, ch.HTML, models.ParseModeHTML)
		if err == nil || telegram.StatusOf(err) != http.StatusBadRequest || ch.Text == "" {
			return err
		}
		c.log.Warn("Telegram refused the HTML; sending plain text", "chat", place, "err", err.Error())
	}
	if ch.Text == "" {
		return nil
	}
	_, err := c.sendMessage(ctx, place, ch.Text, "")
	return err
}

// sendPlain sends text without markup, split as needed.
func (c *Chat) sendPlain(ctx context.Context, place chat.Place, text string) error {
	var chunks []tgformat.Chunk
	for _, p := range tgformat.CutPlain(text, tgformat.MaxMessageUTF16) {
		chunks = append(chunks, tgformat.Chunk{Text: p})
	}
	return c.sendChunks(ctx, place, chunks)
}

// sendPre sends text in <pre> blocks (plain when refused).
func (c *Chat) sendPre(ctx context.Context, place chat.Place, text string) error {
	return c.sendChunks(ctx, place, tgformat.PreChunks(text))
}

func (c *Chat) sendMessage(ctx context.Context, place chat.Place, text string, mode models.ParseMode) (*models.Message, error) {
	m, err := telegram.Send(ctx, c.tg, place.Chat, "sendMessage", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return c.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{
			ChatID: place.Chat, MessageThreadID: place.Topic, Text: text, ParseMode: mode, LinkPreviewOptions: noPreview,
		})
	})
	c.checkSend(place, err)
	return m, err
}

// SendFile uploads the file the session opened, under its name. PNG, JPEG,
// GIF and WebP images (by content) up to 10 MB go as photos, falling back
// to a document when Telegram refuses the photo (PHOTO_INVALID_DIMENSIONS,
// IMAGE_PROCESS_FAILED, …); everything else goes as a document. Only
// file.Content is read (each try reads it again from the start), never a
// path: what the session checked is what is sent. A caption longer than
// Telegram allows follows as its own message.
func (c *Chat) SendFile(ctx context.Context, place chat.Place, file session.OutgoingFile, caption string) error {
	err := c.sendFile(ctx, place, file, caption)
	if err != nil {
		c.log.Error("file not delivered", "chat", place, "file", file.Name, "err", err.Error())
	}
	return err
}

func (c *Chat) sendFile(ctx context.Context, place chat.Place, file session.OutgoingFile, caption string) error {
	short, long := caption, ""
	if tgformat.UTF16Len(caption) > tgformat.MaxCaptionUTF16 {
		short, long = "", caption
	}
	if err := c.tg.Upload(ctx, place.Chat, place.Topic, file.Name, file.Content, file.Size, short); err != nil {
		c.checkSend(place, err)
		return err
	}
	if long != "" {
		return c.sendPlain(ctx, place, long)
	}
	return nil
}
