package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/document"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Attachment is a file the user sent with a message: a photo, a
// document or a voice note.
type Attachment struct {
	// Name is the file name the user's client gave; empty for photos.
	Name     string
	MIMEType string
	// Data is the file's content; nil when Open gives it.
	Data []byte
	// Open, when set, gives the content instead of Data, Size bytes: a
	// file on a local Bot API server's disk, copied into the workspace as
	// a stream and never held whole (uploadstream.go).
	Open func() (io.ReadCloser, error)
	// Size is the content's size; len(Data) when 0.
	Size int64
}

// size is f's size in bytes.
func (f Attachment) size() int64 {
	if f.Size == 0 && f.Open == nil {
		return int64(len(f.Data))
	}
	return f.Size
}

// uploadsDir is where a chat's received files are kept, in its workspace,
// so that tools (a browser's file upload, say) can use them.
const uploadsDir = "uploads"

// maxInlineImage is the largest received image also shown to the model;
// larger ones are only saved (providers refuse images above ~5 MB).
const maxInlineImage = 5 << 20

// maxUploadName bounds a saved file's name, in bytes.
const maxUploadName = 100

// userMessage is the user's turn: the text, a note per received file
// (saved under uploads/ in the workspace), the content of text files, and
// the images themselves. A streamed file that could not be kept is told
// to the chat and noted for the model; a storage failure ends the turn.
func (s *session) userMessage(ctx context.Context, text string, files []Attachment) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleUser}
	var notes []string
	var images []llm.Part
	for i, f := range files {
		saved, err := s.saveUpload(f, i)
		var notKept *uploadError
		switch {
		case errors.As(err, &notKept):
			s.m.logger.Warn("a file was not kept", "chat", s.id, "file", f.Name, "bytes", f.size(), "err", err)
			s.reply(ctx, fmt.Sprintf("I could not keep %s: %s.", orDefault(f.Name, "that file"), notKept.why))
			notes = append(notes, fmt.Sprintf("[The user sent a file (%s, %s) that could not be kept: %s. The user was told.]",
				orDefault(f.Name, "no name"), chat.ByteSize(int(f.size())), notKept.why))
			continue
		case err != nil:
			return msg, &storageError{err: err}
		}
		rel, head, size := saved.rel, saved.head, f.size()
		mime := f.MIMEType
		if mime == "" && f.Open != nil {
			mime = http.DetectContentType(head)
		}
		what := "a file"
		if isImage(mime) {
			what = "an image"
		}
		notes = append(notes, fmt.Sprintf("[The user sent %s, saved in the workspace as %s (%s, %s).]",
			what, rel, orUnknown(mime), chat.ByteSize(int(size))))
		kind := document.Detect(f.Name, mime, head[:min(len(head), 512)])
		switch {
		case isImage(mime):
			if data := s.wholeUpload(f, rel, maxInlineImage); data != nil {
				images = append(images, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: mime, Data: data}})
			}
		case kind != document.KindNone && kind != document.KindText && s.m.o.Documents != nil:
			note, err := s.readDocument(ctx, rel, kind, i)
			if err != nil {
				return msg, err
			}
			notes = append(notes, note)
		case isText(mime, head), kind == document.KindText && isText("text/plain", head):
			notes = append(notes, inlineText(rel, head, size))
		}
	}
	body := capText(strings.TrimSpace(strings.Join(append([]string{text}, notes...), "\n")), maxPartText)
	msg.Parts = append([]llm.Part{{Kind: llm.PartText, Text: body}}, images...)
	return msg, nil
}

// savedUpload is a file saved under uploads/: its workspace-relative
// path and its head (the first maxInlineText bytes).
type savedUpload struct {
	rel  string
	head []byte
}

// wholeUpload is f's content when it is at most max bytes (read back
// from its copy at rel when it was streamed); nil otherwise.
func (s *session) wholeUpload(f Attachment, rel string, max int64) []byte {
	if f.size() > max {
		return nil
	}
	if f.Open == nil {
		return f.Data
	}
	data, err := s.readUploadHead(rel, max)
	if err != nil {
		s.m.logger.Warn("read an upload back", "chat", s.id, "file", rel, "err", err)
		return nil
	}
	return data
}

// readUploadHead reads the first max bytes of the upload at rel, through
// an os.Root of the workspace.
func (s *session) readUploadHead(rel string, max int64) ([]byte, error) {
	ws, err := os.OpenRoot(s.workspace)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	file, err := ws.Open(rel)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(io.LimitReader(file, max))
}

// saveUpload writes f to uploads/ under a safe, unused name (streaming it
// when it opens) and returns where, with its head. It goes through an
// os.Root of the workspace: the chat's servers write there too, and an
// uploads folder one of them made a symlink out of the workspace (another
// chat's) is refused. A streamed file the disk has no room for, or that
// cannot be read, is an *uploadError, and nothing of it is left.
func (s *session) saveUpload(f Attachment, i int) (savedUpload, error) {
	if f.Open != nil {
		if err := s.roomFor(f.Size); err != nil {
			return savedUpload{}, err
		}
	}
	ws, err := os.OpenRoot(s.workspace)
	if err != nil {
		return savedUpload{}, fmt.Errorf("uploads: %w", err)
	}
	defer ws.Close()
	if err := ws.Mkdir(uploadsDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return savedUpload{}, fmt.Errorf("uploads: %w", err)
	}
	dir, err := ws.OpenRoot(uploadsDir)
	if err != nil {
		return savedUpload{}, fmt.Errorf("uploads: %w", err)
	}
	defer dir.Close()
	name := uploadName(f, s.m.o.Now().UTC().Format("20060102-150405"), i)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := 1; ; n++ {
		candidate := name
		if n > 1 {
			candidate = stem + "-" + strconv.Itoa(n) + ext
		}
		file, err := dir.OpenFile(candidate, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return savedUpload{}, fmt.Errorf("uploads: %w", err)
		}
		saved := savedUpload{rel: uploadsDir + "/" + candidate}
		if f.Open != nil {
			err = copyUpload(file, f)
		} else {
			_, err = file.Write(f.Data)
			saved.head = f.Data[:min(len(f.Data), maxInlineText)]
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err == nil && f.Open != nil {
			saved.head, err = s.readUploadHead(saved.rel, maxInlineText)
		}
		if err != nil {
			if rerr := dir.Remove(candidate); rerr != nil {
				s.m.logger.Warn("remove a file not kept", "chat", s.id, "file", saved.rel, "err", rerr)
			}
			return savedUpload{}, fmt.Errorf("uploads: %w", err)
		}
		return saved, nil
	}
}

// uploadName is a file name for f that is safe in any file system and
// shell: the client's name with path parts, control characters and
// anything but letters, digits and . _ - replaced, or photo-<stamp>.<ext>.
func uploadName(f Attachment, stamp string, i int) string {
	name := filepath.Base(strings.ReplaceAll(f.Name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name = strings.Trim(b.String(), "._")
	if name == "" {
		name = "file"
		if isImage(f.MIMEType) {
			name = "photo"
		}
		name += "-" + stamp
		if i > 0 {
			name += "-" + strconv.Itoa(i+1)
		}
		name += extension(f.MIMEType)
	}
	for len(name) > maxUploadName { // keep the extension
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		stem := strings.TrimSuffix(name, ext)
		cut := maxUploadName - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		name = stem[:cut] + ext
	}
	return name
}

func isImage(mime string) bool { return strings.HasPrefix(mime, "image/") }

// maxInlineText is how much of a text file the model reads in the message
// itself; the whole file is in the workspace.
const maxInlineText = 32 << 10

// isText reports whether a file can be shown to the model as text: a
// textual type, or no telling type and valid UTF-8 without NUL bytes.
func isText(mime string, data []byte) bool {
	base, _, _ := strings.Cut(mime, ";")
	switch base = strings.TrimSpace(base); {
	case strings.HasPrefix(base, "text/"), base == "application/json", base == "application/xml",
		base == "application/yaml", base == "application/x-yaml", base == "application/toml",
		base == "application/javascript", base == "application/x-sh":
	case base == "", base == "application/octet-stream":
		if bytes.IndexByte(data, 0) >= 0 {
			return false
		}
	default:
		return false
	}
	return utf8.Valid(trimPartialRune(data[:min(len(data), maxInlineText)]))
}

// inlineText is a text file's content for the user's message, its head
// when it is long: head is its first bytes (up to maxInlineText), size
// the whole file's.
func inlineText(rel string, head []byte, size int64) string {
	shown := head[:min(len(head), maxInlineText)]
	note := ""
	if size > int64(len(shown)) {
		shown = trimPartialRune(shown)
		note = fmt.Sprintf("\n[only the first %s of %s are shown; the whole file is %s]", chat.ByteSize(len(shown)), chat.ByteSize(int(size)), rel)
	}
	return fmt.Sprintf("--- %s ---\n%s\n--- end of %s ---%s", rel, strings.ToValidUTF8(string(shown), "\uFFFD"), rel, note)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

func extension(mime string) string {
	switch mime {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
