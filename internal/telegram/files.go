package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// MaxDownload is the largest file the Bot API lets a bot download.
const MaxDownload = 20 << 20

// ErrTooBig is a file over the limit, which the bot does not receive.
// Errors that are ErrTooBig are a *TooBigError, which says the limit.
var ErrTooBig = errors.New("file too big")

// TooBigError is a file over Limit bytes.
type TooBigError struct {
	// Limit is the most bytes the bot takes for this file.
	Limit int64
}

func (e *TooBigError) Error() string { return fmt.Sprintf("file over %d MB", e.Limit>>20) }

// Is makes every TooBigError ErrTooBig.
func (e *TooBigError) Is(target error) bool { return target == ErrTooBig }

// MaxFile is the largest file the bot can receive: MaxDownload from the
// Bot API, or the local files' limit (Options.MaxLocalFile) when a local
// server's folder is shared with it. A local server not in --local mode
// still answers with downloads, which stay within MaxDownload.
func (c *Client) MaxFile() int64 {
	if c.local != nil {
		return c.maxLocal
	}
	return MaxDownload
}

// Local reports whether the bot reads files from a local Bot API
// server's folder.
func (c *Client) Local() bool { return c.local != nil }

// File is a file a user sent, as Fetch got it: its bytes when they were
// downloaded, or where it lies on a local Bot API server's disk, to be
// opened when it is read.
type File struct {
	// Size is the file's size in bytes.
	Size int64
	// Data is the file's content when it was downloaded; nil when it
	// lies on the local server's disk (Open reads it).
	Data []byte
	open func() (*os.File, int64, error)
}

// Open returns a reader of the file's content, Size bytes at most: its
// bytes, or the file on the local server's disk opened again (confined to
// the bot's folder there) and checked to have the size it had.
func (f File) Open() (io.ReadCloser, error) {
	if f.open == nil {
		return io.NopCloser(bytes.NewReader(f.Data)), nil
	}
	file, size, err := f.open()
	if err != nil {
		return nil, err
	}
	if size != f.Size {
		file.Close()
		return nil, fmt.Errorf("%w: the file changed size (%d bytes, was %d)", ErrLocalFile, size, f.Size)
	}
	return file, nil
}

// Download fetches a file by id into memory: at most max bytes (0: the
// most the bot takes, MaxFile), and never more than MaxDownload over
// HTTP. A file over that is a *TooBigError, found before its bytes are
// read when getFile or the disk says its size.
func (c *Client) Download(ctx context.Context, chatID int64, fileID string, max int64) ([]byte, error) {
	f, err := c.fetch(ctx, chatID, fileID, max, false)
	return f.Data, err
}

// Fetch gets a file by id to be read as a stream: a file on a local Bot
// API server's disk is only looked at (its size, whether it may be read),
// and read when the File is opened; a file the Bot API serves is
// downloaded, as with Download. Up to max bytes (0: MaxFile).
func (c *Client) Fetch(ctx context.Context, chatID int64, fileID string, max int64) (File, error) {
	return c.fetch(ctx, chatID, fileID, max, true)
}

// fetch is getFile (one of chat's calls), then the file: from the local
// server's folder when getFile gave an absolute path, else from the Bot
// API's file endpoint, both retried like every call. A file over the
// limit is a *TooBigError, whether Telegram says so (getFile's "file is
// too big"), its size does, or its download goes on past the limit (never
// held beyond it, never retried).
func (c *Client) fetch(ctx context.Context, chatID int64, fileID string, max int64, stream bool) (File, error) {
	if max <= 0 || max > c.MaxFile() {
		max = c.MaxFile()
	}
	f, err := send(ctx, c.out, chatID, "getFile", Unpaced, func(ctx context.Context) (*models.File, error) {
		return c.api.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	})
	if err != nil {
		if strings.Contains(err.Error(), "file is too big") { // Telegram's own refusal
			return File{}, &TooBigError{Limit: min(max, MaxDownload)}
		}
		return File{}, err
	}
	if strings.HasPrefix(f.FilePath, "/") {
		return c.fetchLocal(f, max, stream)
	}
	max = min(max, MaxDownload)
	if f.FileSize > max {
		return File{}, &TooBigError{Limit: max}
	}
	data, err := c.download(ctx, chatID, f, max)
	return File{Size: int64(len(data)), Data: data}, err
}

// fetchLocal is the file at f.FilePath on the local server's disk.
func (c *Client) fetchLocal(f *models.File, max int64, stream bool) (File, error) {
	if c.local == nil {
		return File{}, ErrLocalPath
	}
	l := *c.local
	rel, err := l.rel(f.FilePath)
	if err != nil {
		return File{}, err
	}
	if f.FileSize > max {
		return File{}, &TooBigError{Limit: max}
	}
	file, size, err := l.open(rel)
	if err != nil {
		return File{}, err
	}
	defer file.Close()
	if size > max {
		return File{}, &TooBigError{Limit: max}
	}
	if stream {
		return File{Size: size, open: func() (*os.File, int64, error) { return l.open(rel) }}, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(file, data); err != nil {
		return File{}, fmt.Errorf("%w: read %s: %w", ErrLocalFile, rel, pathCause(err))
	}
	return File{Size: size, Data: data}, nil
}

// download fetches f from the Bot API's file endpoint, at most max bytes.
func (c *Client) download(ctx context.Context, chatID int64, f *models.File, max int64) ([]byte, error) {
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
		limit := max
		if f.FileSize > 0 {
			limit = f.FileSize
		}
		buf := bytes.NewBuffer(make([]byte, 0, min(limit, max)+bytes.MinRead))
		if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
			return nil, err
		}
		if int64(buf.Len()) > limit {
			return nil, &TooBigError{Limit: max}
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
