package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// What the bot receives of each kind of file, and how:
//
//   - a photo (its largest size) is read into memory, up to maxPhotoBytes:
//     the model sees it, and Telegram's photos are a few MB;
//   - a document (an album's parts too) is streamed: from a local Bot API
//     server's folder it is only looked at here, and the session copies it
//     into the workspace (never held whole), up to the client's MaxFile
//     (TELEGRAM_MAX_FILE_MB); downloaded from the Bot API it is 20 MB at
//     most, in memory as before;
//   - a voice note, an audio file or a round video goes to speech-to-text
//     as bytes, so it is read into memory, up to VoiceOptions.MaxBytes
//     (25 MB, OpenAI's limit) — voice.go.

// maxPhotoBytes bounds a photo read into memory: the Bot API's download
// limit, also from a local server (a photo Telegram made is far smaller).
const maxPhotoBytes = telegram.MaxDownload

// tooBigReply answers a file over the Bot API's download limit.
const tooBigReply = "That file is too big for me: Telegram lets bots receive files up to 20 MB."

// tooBigNote tells the model of a file that did not come with the
// user's words.
const tooBigNote = "[The user also sent a file over 20 MB, which Telegram does not let bots download: it was not received.]"

// localPathReply answers a file the bot's local Bot API server keeps on
// a disk the bot was not given.
const localPathReply = "Sorry, I cannot receive files yet: this bot's Telegram server keeps them on its own disk, " +
	"which the operator has not shared with me (TELEGRAM_LOCAL_FILES_DIR)."

// tooBigTexts are the reply and the model's note for a file over limit.
func tooBigTexts(limit int64) (reply, note string) {
	if limit == telegram.MaxDownload {
		return tooBigReply, tooBigNote
	}
	size := megabytes(limit)
	return fmt.Sprintf("That file is too big for me: I receive files up to %s.", size),
		fmt.Sprintf("[The user also sent a file over %s, the most the bot receives: it was not received.]", size)
}

// megabytes is a limit for people: "2000 MB", "25 MB".
func megabytes(limit int64) string {
	if limit%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", limit>>20)
	}
	return chat.ByteSize(int(limit))
}

// tooBigLimit is the limit a too-big error names (20 MB when it names
// none).
func tooBigLimit(err error) int64 {
	var e *telegram.TooBigError
	if errors.As(err, &e) {
		return e.Limit
	}
	return telegram.MaxDownload
}

// fileFailed tells the chat and the log why a file was not received
// (what: "a file", "a voice note"), unless it was too big, which the
// caller answers.
func (b *Bot) fileFailed(ctx context.Context, place chat.Place, what string, err error) {
	if errors.Is(err, telegram.ErrLocalPath) {
		b.log.Error("receive "+what+": "+b.scrub(err.Error())+" (docs/configuration.md, The 20 MB limit)", "chat", place)
		b.reply(ctx, place, localPathReply)
		return
	}
	b.log.Error("receive "+what, "chat", place, "err", errText(b.scrub, err))
	b.reply(ctx, place, fileReply)
}

// attachments gets the photo (its largest size) or document of m. A file
// over the limit is a *telegram.TooBigError, which the caller answers with
// tooBigTexts.
func (b *Bot) attachments(ctx context.Context, m *models.Message) ([]session.Attachment, error) {
	switch {
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1]
		limit := min(b.tg.MaxFile(), maxPhotoBytes)
		if int64(p.FileSize) > limit {
			return nil, &telegram.TooBigError{Limit: limit}
		}
		data, err := b.tg.Download(ctx, m.Chat.ID, p.FileID, limit)
		if err != nil {
			return nil, err
		}
		return []session.Attachment{{MIMEType: photoType(data), Data: data, Size: int64(len(data))}}, nil
	case m.Document != nil:
		d := m.Document
		if d.FileSize > b.tg.MaxFile() {
			return nil, &telegram.TooBigError{Limit: b.tg.MaxFile()}
		}
		f, err := b.tg.Fetch(ctx, m.Chat.ID, d.FileID, 0)
		if err != nil {
			return nil, err
		}
		mime := d.MimeType
		if mime == "" && f.Data != nil {
			mime = http.DetectContentType(f.Data)
		}
		a := session.Attachment{Name: d.FileName, MIMEType: mime, Data: f.Data, Size: f.Size}
		if f.Data == nil {
			a.Open = f.Open
		}
		return []session.Attachment{a}, nil
	}
	return nil, nil
}

// photoType is the type of a photo's bytes: Telegram sends JPEG, but a
// local Bot API server or a fake may not.
func photoType(data []byte) string {
	if t := http.DetectContentType(data); strings.HasPrefix(t, "image/") {
		return t
	}
	return "image/jpeg"
}
