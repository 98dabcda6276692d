package bot

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// tooBigReply answers a file the bot cannot download.
const tooBigReply = "That file is too big for me: Telegram lets bots receive files up to 20 MB."

// tooBigNote tells the model of a file that did not come with the
// user's words.
const tooBigNote = "[The user also sent a file over 20 MB, which Telegram does not let bots download: it was not received.]"

// attachments downloads the photo (its largest size) or document of m. A
// file over the Bot API's limit is telegram.ErrTooBig, which the caller answers
// with tooBigReply.
func (b *Bot) attachments(ctx context.Context, m *models.Message) ([]session.Attachment, error) {
	switch {
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1]
		if p.FileSize > telegram.MaxDownload {
			return nil, telegram.ErrTooBig
		}
		data, err := b.tg.Download(ctx, m.Chat.ID, p.FileID)
		if err != nil {
			return nil, err
		}
		return []session.Attachment{{MIMEType: photoType(data), Data: data}}, nil
	case m.Document != nil:
		d := m.Document
		if d.FileSize > telegram.MaxDownload {
			return nil, telegram.ErrTooBig
		}
		data, err := b.tg.Download(ctx, m.Chat.ID, d.FileID)
		if err != nil {
			return nil, err
		}
		mime := d.MimeType
		if mime == "" {
			mime = http.DetectContentType(data)
		}
		return []session.Attachment{{Name: d.FileName, MIMEType: mime, Data: data}}, nil
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
