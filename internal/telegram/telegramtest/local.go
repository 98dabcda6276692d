package telegramtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"
)

// A local Bot API server (tdlib/telegram-bot-api --local) keeps the files
// users send on its own disk, under its working directory (--dir) in a
// folder named by the bot's token, and answers getFile with the file's
// absolute path there instead of a download: no 20 MB limit, and its
// file endpoint serves nothing.

// ServeLocal makes the fake a local Bot API server in --local mode whose
// --dir is dir: from now on every file users send (Document, Photo,
// Voice, …) is written to dir/<token>/<kind>/file_N (a DocumentStream's
// as a sparse file of its stream's size, made in no time and taking no
// room) and getFile answers with that absolute path.
func (f *Fake) ServeLocal(dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.localDir = dir
}

// LocalPath is where the fake, serving local files from dir (ServeLocal),
// keeps a file of kind ("documents", "voice", "photos", …) named name:
// dir/<token>/kind/name.
func (f *Fake) LocalPath(dir, kind, name string) string {
	return filepath.Join(dir, f.token, kind, name)
}

// DocumentAt queues a document from user in chat whose getFile answers
// path as a local Bot API server does (absolute, whatever it is: another
// bot's folder, a "..", a symlink, nothing) and size as its size (0: the
// size of the file at path, if any). It returns the message id.
func (f *Fake) DocumentAt(chatID, userID int64, name, mime, path string, size int64, caption string) int {
	if size == 0 {
		if info, err := os.Stat(path); err == nil {
			size = info.Size()
		}
	}
	m := f.NewMessage(chatID, userID, "")
	m.Caption, m.CaptionEntities = caption, entitiesOf(caption)
	f.mu.Lock()
	f.fileSeq++
	id := "file-" + strconv.Itoa(f.fileSeq)
	if f.files == nil {
		f.files = map[string]storedFile{}
	}
	f.files[id] = storedFile{path: path, size: int(size), local: true}
	f.mu.Unlock()
	m.Document = &models.Document{FileID: id, FileUniqueID: id, FileName: name, MimeType: mime, FileSize: size}
	return f.send(m)
}

// storeLocalLocked writes the file id to the local server's folder and
// points its getFile answer there. A failure to write panics: the test
// cannot go on. f.mu must be held.
func (f *Fake) storeLocalLocked(id, ext string) {
	file := f.files[id]
	kind, _, _ := strings.Cut(file.path, "/")
	switch ext {
	case ".jpg":
		kind = "photos"
	case ".oga":
		kind = "voice"
	case ".mp4":
		kind = "video_notes"
	}
	path := filepath.Join(f.localDir, f.token, kind, strings.ReplaceAll(id, "-", "_")+ext)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		panic(err)
	}
	w, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	switch {
	case file.stream > 0:
		err = w.Truncate(file.stream)
	default:
		_, err = bytes.NewReader(file.data).WriteTo(w)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		panic(err)
	}
	file.path, file.local, file.data = path, true, nil
	f.files[id] = file
}
