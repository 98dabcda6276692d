package bot

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strconv"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// Voice notes in: a voice note, an audio file or a round video message is
// downloaded, transcribed, shown to the chat as what was understood
// ("🎤 …"), and handed to the session as the user's message — the
// transcript, then the caption — with the file, which lands in the
// workspace like any upload. Nothing of it reaches the model when it
// cannot be transcribed: the chat is told why.

// Transcriber turns a voice note into text (speech.Transcriber satisfies
// it). Its errors carry what the user is told (chat.UserMessage).
type Transcriber interface {
	Transcribe(ctx context.Context, name string, audio []byte) (string, error)
}

// VoiceOptions are Options.Voice.
type VoiceOptions struct {
	// Transcriber is the speech-to-text endpoint; nil: voice notes are
	// answered with how to enable it.
	Transcriber Transcriber
	// MaxDuration is the longest voice note transcribed;
	// DefaultMaxVoiceDuration when 0.
	MaxDuration time.Duration
	// Model names the transcription model in /usage.
	Model string
	// MaxBytes bounds a voice note read into memory for the transcriber;
	// DefaultMaxVoiceBytes when 0. Telegram's Bot API gives at most 20 MB
	// anyway; a local Bot API server more.
	MaxBytes int64
}

// DefaultMaxVoiceBytes is VoiceOptions.MaxBytes unset: 25 MB, OpenAI's
// limit for a transcription's file.
const DefaultMaxVoiceBytes = 25 << 20

// AudioUsage is a Usage that counts the seconds of voice notes
// transcribed (spend.Ledger does).
type AudioUsage interface {
	RecordAudio(chat, user int64, model string, seconds int64)
}

// DefaultMaxVoiceDuration is VoiceOptions.MaxDuration unset: ten minutes,
// about 10 MB of Telegram's Opus and a few cents of transcription.
const DefaultMaxVoiceDuration = 10 * time.Minute

// Texts of the voice notes.
const (
	voiceOffReply = "I can't listen to voice notes here: speech-to-text is not set up (the operator sets STT_BASE_URL, " +
		"or uses an OpenAI key). Please write your message instead."
	voiceFailedReply = "Sorry, I could not transcribe that voice note."
	voiceRetry       = " Please try again, or write your message."
	// transcriptShown is the longest transcript the chat is shown whole.
	transcriptShown = 3500
	// transcriptFolded is the length from which it is folded (an
	// expandable quote).
	transcriptFolded = 300
)

// voiceNote is what a message holds to be listened to.
type voiceNote struct {
	fileID, name, mime string
	duration           time.Duration
	size               int64
}

// voiceOf is m's voice note, audio file or round video, if any.
func voiceOf(m *models.Message) (voiceNote, bool) {
	id := strconv.Itoa(m.ID)
	switch {
	case m.Voice != nil:
		v := m.Voice
		return voiceNote{v.FileID, "voice-" + id + ".ogg", "audio/ogg", seconds(v.Duration), v.FileSize}, true
	case m.Audio != nil:
		a := m.Audio
		name := a.FileName
		if name == "" {
			name = "audio-" + id + ".mp3"
		}
		return voiceNote{a.FileID, name, a.MimeType, seconds(a.Duration), a.FileSize}, true
	case m.VideoNote != nil:
		v := m.VideoNote
		return voiceNote{v.FileID, "video-note-" + id + ".mp4", "video/mp4", seconds(v.Duration), int64(v.FileSize)}, true
	}
	return voiceNote{}, false
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// onVoice handles a voice note addressed to the bot (r.text: its
// caption), and reports whether it handed it to the session.
func (b *Bot) onVoice(ctx context.Context, m *models.Message, r route, keys []int64) bool {
	place, userID := placeOf(m), m.From.ID
	v, _ := voiceOf(m)
	limit := b.o.Voice.MaxDuration
	if limit <= 0 {
		limit = DefaultMaxVoiceDuration
	}
	switch {
	case b.o.Voice.Transcriber == nil:
		b.reply(ctx, place, voiceOffReply)
		return false
	case v.size > b.maxVoiceBytes():
		b.voiceTooBig(ctx, place, b.maxVoiceBytes())
		return false
	case v.duration > limit:
		b.reply(ctx, place, fmt.Sprintf("That voice note is %s long; I transcribe up to %s.", session.DurationText(v.duration),
			session.DurationText(limit))+voiceRetry)
		return false
	}
	data, err := b.tg.Download(ctx, place.Chat, v.fileID, b.maxVoiceBytes())
	if err != nil {
		b.downloadFailed(ctx, place, err)
		return false
	}
	b.chat.typingOnce(ctx, place)
	text, err := b.o.Voice.Transcriber.Transcribe(ctx, v.name, data)
	if err != nil {
		b.transcriptionFailed(ctx, place, err)
		return false
	}
	if au, ok := b.o.Usage.(AudioUsage); ok {
		au.RecordAudio(place.Chat, userID, b.o.Voice.Model, int64(v.duration/time.Second))
	}
	b.showTranscript(ctx, place, text)
	msg := "(voice note, transcribed) " + text
	if r.text != "" {
		msg += "\n\n" + r.text
	}
	files := []session.Attachment{{Name: v.name, MIMEType: v.mime, Data: data}}
	return b.deliver(ctx, place, userID, withReplyContext(m, b.me, msg), files, keys)
}

// maxVoiceBytes is the largest voice note read for the transcriber: the
// voice limit, within what the bot receives at all.
func (b *Bot) maxVoiceBytes() int64 {
	limit := b.o.Voice.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxVoiceBytes
	}
	return min(limit, b.tg.MaxFile())
}

// voiceTooBig answers a voice note over limit bytes.
func (b *Bot) voiceTooBig(ctx context.Context, place chat.Place, limit int64) {
	if limit == telegram.MaxDownload {
		b.reply(ctx, place, tooBigReply)
		return
	}
	b.reply(ctx, place, fmt.Sprintf("That recording is too big for me: I transcribe files up to %s.", megabytes(limit))+voiceRetry)
}

// downloadFailed answers a voice note that could not be downloaded.
func (b *Bot) downloadFailed(ctx context.Context, place chat.Place, err error) {
	if errors.Is(err, telegram.ErrTooBig) {
		b.voiceTooBig(ctx, place, tooBigLimit(err))
		return
	}
	b.fileFailed(ctx, place, "a voice note", err)
}

// transcriptionFailed tells the chat why its voice note was not heard.
func (b *Bot) transcriptionFailed(ctx context.Context, place chat.Place, err error) {
	if ctx.Err() != nil {
		return // shutting down: the inbox hands it in again
	}
	b.log.Warn("a voice note was not transcribed", "chat", place, "err", errText(b.scrub, err))
	msg, ok := chat.UserMessage(err)
	if !ok {
		msg = voiceFailedReply
	}
	b.reply(ctx, place, msg+voiceRetry)
}

// showTranscript shows the chat what was understood: "🎤 " and the
// transcript, folded when long, cut when very long.
func (b *Bot) showTranscript(ctx context.Context, place chat.Place, text string) {
	text = chat.CapText(b.scrub(text), transcriptShown)
	body := html.EscapeString(text)
	if len(text) >= transcriptFolded {
		body = "<blockquote expandable>" + body + "</blockquote>"
	}
	if _, err := b.chat.sendMessage(ctx, place, "🎤 "+body, models.ParseModeHTML); err != nil && ctx.Err() == nil {
		b.log.Warn("the transcript was not shown", "chat", place, "err", errText(b.scrub, err))
	}
}

// typingOnce shows "typing…" while a voice note is transcribed (no retry:
// it is only a hint, and lasts five seconds).
func (c *Chat) typingOnce(ctx context.Context, place chat.Place) {
	err := c.tg.DoOnce(ctx, place.Chat, "sendChatAction", telegram.Unpaced, func(ctx context.Context) error {
		_, err := c.tg.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: place.Chat, MessageThreadID: place.Topic, Action: models.ChatActionTyping})
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Debug("typing not sent", "chat", place, "err", err.Error())
	}
}
