package telegram

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// MaxDownload is the largest file the Bot API lets a bot download.
const MaxDownload = 20 << 20

// ErrTooBig is a file over MaxDownload, which the bot cannot download.
var ErrTooBig = fmt.Errorf("file over %d MB", MaxDownload>>20)

// Download fetches a file by id: getFile for its path (one of chat's
// calls), then the file from the Bot API's file endpoint, both retried
// like every call. A file over MaxDownload is ErrTooBig.
func (c *Client) Download(ctx context.Context, chatID int64, fileID string) ([]byte, error) {
	f, err := send(ctx, c.out, chatID, "getFile", Unpaced, func(ctx context.Context) (*models.File, error) {
		return c.api.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	})
	if err != nil {
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
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxDownload+1))
		if err != nil {
			return nil, err
		}
		if len(data) > MaxDownload {
			return nil, ErrTooBig
		}
		return data, nil
	})
}

// statusError is an HTTP answer other than 200 from the file endpoint.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return "HTTP " + strconv.Itoa(e.code) + " " + http.StatusText(e.code)
}
