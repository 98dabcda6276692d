package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// MaxDownload is the largest file the Bot API lets a bot download.
const MaxDownload = 20 << 20

// ErrTooBig is a file over MaxDownload, which the bot cannot download.
var ErrTooBig = fmt.Errorf("file over %d MB", MaxDownload>>20)

// Download fetches a file by id: getFile for its path (one of chat's
// calls), then the file from the Bot API's file endpoint, both retried
// like every call. A file over MaxDownload is ErrTooBig, whether Telegram
// says so (getFile's "file is too big"), its size does, or its download
// goes on past the limit (never held beyond it, never retried).
func (c *Client) Download(ctx context.Context, chatID int64, fileID string) ([]byte, error) {
	f, err := send(ctx, c.out, chatID, "getFile", Unpaced, func(ctx context.Context) (*models.File, error) {
		return c.api.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	})
	if err != nil {
		if strings.Contains(err.Error(), "file is too big") { // Telegram's own refusal
			return nil, ErrTooBig
		}
		return nil, err
	}
	if f.FileSize > MaxDownload {
		return nil, ErrTooBig
	}
	link := c.api.FileDownloadLink(f) // carries the token: errors are scrubbed
	return call(ctx, c.rt, chatID, "download file", func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, &statusError{code: resp.StatusCode}
		}
		// Read at most the size getFile gave (a download longer than
		// that is refused like one over the limit) into a buffer of that
		// size: a 20 MB file costs 20 MB, not the 60 MB of doubling.
		// ReadFrom grows a buffer with less than bytes.MinRead free before
		// every read, the one that finds the end too: that much more room.
		limit := int64(MaxDownload)
		if f.FileSize > 0 {
			limit = f.FileSize
		}
		buf := bytes.NewBuffer(make([]byte, 0, min(limit, MaxDownload)+bytes.MinRead))
		if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
			return nil, err
		}
		if int64(buf.Len()) > limit {
			return nil, ErrTooBig
		}
		return buf.Bytes(), nil
	})
}

// statusError is an HTTP answer other than 200 from the file endpoint.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return "HTTP " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}

// maxPhotoBytes is Telegram's limit for a photo upload.
const maxPhotoBytes = 10 << 20

// Upload sends content to chat as a file called name, with caption (at
// most tgformat.MaxCaptionUTF16: the caller sends a longer one apart).
// PNG, JPEG, GIF and WebP images (by content) up to 10 MB go as photos,
// falling back to a document when Telegram refuses the photo
// (PHOTO_INVALID_DIMENSIONS, IMAGE_PROCESS_FAILED, …); everything else
// goes as a document. Only content is read (each try reads it again from
// the start), never a path. thread is the forum topic to send it in
// (its message_thread_id; 0: none).
func (c *Client) Upload(ctx context.Context, chatID int64, thread int, name string, content io.ReaderAt, size int64, caption string) error {
	head := make([]byte, 512) // what http.DetectContentType looks at
	n, err := content.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	data := func() io.Reader { return io.NewSectionReader(content, 0, size) }
	if isPhoto(head[:n]) && size <= maxPhotoBytes {
		err := c.out.do(ctx, chatID, "sendPhoto", Paced, func(ctx context.Context) error {
			_, err := c.api.SendPhoto(ctx, &tgbot.SendPhotoParams{
				ChatID: chatID, MessageThreadID: thread, Caption: caption,
				Photo: &models.InputFileUpload{Filename: name, Data: data()},
			})
			return err
		})
		switch {
		case err == nil:
			return nil
		case photoRefused(err):
			c.log.Info("Telegram refused the photo; sending it as a document", "chat", chatID, "file", name, "err", err.Error())
		default:
			return err
		}
	}
	return c.out.do(ctx, chatID, "sendDocument", Paced, func(ctx context.Context) error {
		_, err := c.api.SendDocument(ctx, &tgbot.SendDocumentParams{
			ChatID: chatID, MessageThreadID: thread, Caption: caption,
			Document: &models.InputFileUpload{Filename: name, Data: data()},
		})
		return err
	})
}

// isPhoto reports whether data is an image Telegram takes as a photo.
func isPhoto(data []byte) bool {
	switch http.DetectContentType(data) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// photoRefused reports whether a photo failed for what it is (dimensions,
// format, size) rather than for the chat or the network: then a document
// may still go through.
func photoRefused(err error) bool {
	code := StatusOf(err)
	return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge
}
