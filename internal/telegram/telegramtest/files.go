package telegramtest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"
)

// maxDownloadBytes is the Bot API's getFile limit.
const maxDownloadBytes = 20 << 20

// storedFile is a file users sent, served by getFile and the file
// endpoint.
type storedFile struct {
	path string
	data []byte
	size int // what getFile reports (may claim more than data, to test limits)
	// stream, when set, is how many bytes the file endpoint sends
	// instead of data: generated as they go, never held.
	stream int64
	// local: path is an absolute path on the local server's disk, with
	// no 20 MB limit and nothing to download.
	local bool
}

// addFileLocked stores data under a new file id and returns the id.
// f.mu must be held.
func (f *Fake) addFileLocked(data []byte, ext string, size int) string {
	f.fileSeq++
	id := "file-" + strconv.Itoa(f.fileSeq)
	if f.files == nil {
		f.files = map[string]storedFile{}
	}
	f.files[id] = storedFile{path: "documents/" + id + ext, data: data, size: size}
	if f.localDir != "" {
		f.storeLocalLocked(id, ext)
	}
	return id
}

// Photo queues a photo from user in chat with caption (its entities
// marked) and returns the message id. Like Telegram, the message lists a
// thumbnail and the full size; the full size's file holds data.
func (f *Fake) Photo(chatID, userID int64, data []byte, caption string) int {
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	thumb := f.addFileLocked(data, ".jpg", len(data))
	full := f.addFileLocked(data, ".jpg", len(data))
	f.mu.Unlock()
	m.Photo = []models.PhotoSize{
		{FileID: thumb, FileUniqueID: thumb, Width: 90, Height: 90, FileSize: len(data)},
		{FileID: full, FileUniqueID: full, Width: 1280, Height: 960, FileSize: len(data)},
	}
	return f.send(m)
}

// Album queues photos sent together: one message each, sharing a media
// group id, the caption on the first, as Telegram delivers an album. It
// returns the message ids.
func (f *Fake) Album(chatID, userID int64, photos [][]byte, caption string) []int {
	f.mu.Lock()
	f.fileSeq++
	group := "album-" + strconv.Itoa(f.fileSeq)
	f.mu.Unlock()
	var ids []int
	for i, data := range photos {
		m := f.NewMessage(chatID, userID, "")
		if i == 0 {
			m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
		}
		m.MediaGroupID = group
		f.mu.Lock()
		id := f.addFileLocked(data, ".jpg", len(data))
		f.mu.Unlock()
		m.Photo = []models.PhotoSize{{FileID: id, FileUniqueID: id, Width: 1280, Height: 960, FileSize: len(data)}}
		ids = append(ids, f.send(m))
	}
	return ids
}

// Document queues a file from user in chat and returns the message id.
// size is what Telegram reports for it (0: len(data)); a size over 20 MB
// makes getFile refuse it, as Telegram does.
func (f *Fake) Document(chatID, userID int64, name, mime string, data []byte, size int, caption string) int {
	if size == 0 {
		size = len(data)
	}
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	id := f.addFileLocked(data, "", size)
	f.mu.Unlock()
	m.Document = &models.Document{FileID: id, FileUniqueID: id, FileName: name, MimeType: mime, FileSize: int64(size)}
	return f.send(m)
}

// DocumentStream queues a document that Telegram announces as size
// bytes but whose download sends stream bytes (of the letter x), made as
// they are sent: a file too big to hold, or one whose size was a lie.
func (f *Fake) DocumentStream(chatID, userID int64, name, mime string, size int, stream int64, caption string) int {
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	id := f.addFileLocked(nil, "", size)
	file := f.files[id]
	file.stream = stream
	f.files[id] = file
	if f.localDir != "" {
		f.storeLocalLocked(id, "")
	}
	f.mu.Unlock()
	m.Document = &models.Document{FileID: id, FileUniqueID: id, FileName: name, MimeType: mime, FileSize: int64(size)}
	return f.send(m)
}

func (f *Fake) getFile(p map[string]string) (any, error) {
	f.mu.Lock()
	file, ok := f.files[p["file_id"]]
	f.mu.Unlock()
	switch {
	case !ok:
		return nil, badRequest("invalid file_id")
	case !file.local && file.size > maxDownloadBytes:
		return nil, badRequest("file is too big")
	}
	return models.File{FileID: p["file_id"], FileUniqueID: p["file_id"], FileSize: int64(file.size), FilePath: file.path}, nil
}

// serveFile answers GET /file/bot<token>/<path>, the download of a file
// getFile named. It is recorded as a request of the method "file".
func (f *Fake) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	status := http.StatusOK
	var data []byte
	var stream int64
	f.mu.Lock()
	switch {
	case token != f.token:
		status = http.StatusUnauthorized
	default:
		status = http.StatusNotFound
		for _, file := range f.files {
			if file.path == path {
				status, data, stream = http.StatusOK, file.data, file.stream
			}
		}
	}
	f.mu.Unlock()
	f.record(Request{Method: "file", Params: map[string]string{"path": path}}, status)
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	if stream > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(stream, 10))
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for sent := int64(0); sent < stream; sent += int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), stream-sent)]); err != nil {
				return // the client stopped reading
			}
		}
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// Voice queues a voice note (Ogg Opus) of seconds from user in chat, with
// caption, and returns the message id. size is what Telegram reports for
// it (0: len(data)).
func (f *Fake) Voice(chatID, userID int64, data []byte, seconds, size int, caption string) int {
	if size == 0 {
		size = len(data)
	}
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	id := f.addFileLocked(data, ".oga", size)
	f.mu.Unlock()
	m.Voice = &models.Voice{FileID: id, FileUniqueID: id, Duration: seconds, MimeType: "audio/ogg", FileSize: int64(size)}
	return f.send(m)
}

// Audio queues a music or audio file (name, e.g. "talk.mp3") of seconds
// from user in chat, and returns the message id.
func (f *Fake) Audio(chatID, userID int64, name string, data []byte, seconds int, caption string) int {
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	id := f.addFileLocked(data, "", len(data))
	f.mu.Unlock()
	m.Audio = &models.Audio{FileID: id, FileUniqueID: id, Duration: seconds, FileName: name, MimeType: "audio/mpeg", FileSize: int64(len(data))}
	return f.send(m)
}

// VideoNote queues a round video message of seconds from user in chat
// and returns the message id.
func (f *Fake) VideoNote(chatID, userID int64, data []byte, seconds int) int {
	m := f.NewMessage(chatID, userID, "")
	f.mu.Lock()
	id := f.addFileLocked(data, ".mp4", len(data))
	f.mu.Unlock()
	m.VideoNote = &models.VideoNote{FileID: id, FileUniqueID: id, Duration: seconds, Length: 240, FileSize: len(data)}
	return f.send(m)
}
