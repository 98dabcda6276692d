package bot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/session"
)

// maxDownload is the largest file the Bot API lets a bot download.
const maxDownload = 20 << 20

// tooBigReply answers a file the bot cannot download.
const tooBigReply = "That file is too big for me: Telegram lets bots receive files up to 20 MB."

// attachments downloads the photo (its largest size) or document of m. A
// file over the Bot API's limit is errTooBig, which the caller answers
// with tooBigReply.
func (b *Bot) attachments(ctx context.Context, m *models.Message) ([]session.Attachment, error) {
	switch {
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1]
		if p.FileSize > maxDownload {
			return nil, errTooBig
		}
		data, err := b.download(ctx, m.Chat.ID, p.FileID)
		if err != nil {
			return nil, err
		}
		return []session.Attachment{{MIMEType: photoType(data), Data: data}}, nil
	case m.Document != nil:
		d := m.Document
		if d.FileSize > maxDownload {
			return nil, errTooBig
		}
		data, err := b.download(ctx, m.Chat.ID, d.FileID)
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

var errTooBig = fmt.Errorf("file over %d MB", maxDownload>>20)

// download fetches a file by id: getFile for its path, then the file from
// the Bot API's file endpoint, both retried like every call.
func (b *Bot) download(ctx context.Context, chatID int64, fileID string) ([]byte, error) {
	f, err := send(ctx, b.chat.out, chatID, "getFile", unpaced, func(ctx context.Context) (*models.File, error) {
		return b.tg.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	})
	if err != nil {
		return nil, err
	}
	if f.FileSize > maxDownload {
		return nil, errTooBig
	}
	link := b.tg.FileDownloadLink(f) // carries the token: errors are scrubbed
	return call(ctx, b.chat.rt, chatID, "download file", func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
		if err != nil {
			return nil, err
		}
		resp, err := b.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, &statusError{code: resp.StatusCode}
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxDownload {
			return nil, errTooBig
		}
		return data, nil
	})
}

// statusError is an HTTP answer other than 200 from the file endpoint.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return "HTTP " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}
