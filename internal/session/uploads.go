package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// Attachment is a file the user sent with a message: a photo or a
// document.
type Attachment struct {
	// Name is the file name the user's client gave; empty for photos.
	Name     string
	MIMEType string
	Data     []byte
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
// the images themselves.
func (s *session) userMessage(ctx context.Context, text string, files []Attachment) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleUser}
	var notes []string
	var images []llm.Part
	for i, f := range files {
		rel, err := s.saveUpload(f, i)
		if err != nil {
			return msg, &storageError{err: err}
		}
		what := "a file"
		if isImage(f.MIMEType) {
			what = "an image"
		}
		notes = append(notes, fmt.Sprintf("[The user sent %s, saved in the workspace as %s (%s, %s).]",
			what, rel, orUnknown(f.MIMEType), chat.ByteSize(len(f.Data))))
		kind := document.Detect(f.Name, f.MIMEType, f.Data[:min(len(f.Data), 512)])
		switch {
		case isImage(f.MIMEType):
			if len(f.Data) <= maxInlineImage {
				images = append(images, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: f.MIMEType, Data: f.Data}})
			}
		case kind != document.KindNone && kind != document.KindText && s.m.o.Documents != nil:
			note, err := s.readDocument(ctx, rel, kind, i)
			if err != nil {
				return msg, err
			}
			notes = append(notes, note)
		case isText(f.MIMEType, f.Data), kind == document.KindText && isText("text/plain", f.Data):
			notes = append(notes, inlineText(rel, f.Data))
		}
	}
	body := capText(strings.TrimSpace(strings.Join(append([]string{text}, notes...), "\n")), maxPartText)
	msg.Parts = append([]llm.Part{{Kind: llm.PartText, Text: body}}, images...)
	return msg, nil
}

// saveUpload writes f to uploads/ under a safe, unused name and returns
// its workspace-relative path. It goes through an os.Root of the
// workspace: the chat's servers write there too, and an uploads folder one
// of them made a symlink out of the workspace (another chat's) is refused.
func (s *session) saveUpload(f Attachment, i int) (string, error) {
	ws, err := os.OpenRoot(s.workspace)
	if err != nil {
		return "", fmt.Errorf("uploads: %w", err)
	}
	defer ws.Close()
	if err := ws.Mkdir(uploadsDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("uploads: %w", err)
	}
	dir, err := ws.OpenRoot(uploadsDir)
	if err != nil {
		return "", fmt.Errorf("uploads: %w", err)
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
			return "", fmt.Errorf("uploads: %w", err)
		}
		_, err = file.Write(f.Data)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("uploads: %w", err)
		}
		return uploadsDir + "/" + candidate, nil
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
// when it is long.
func inlineText(rel string, data []byte) string {
	shown := data
	note := ""
	if len(shown) > maxInlineText {
		shown = trimPartialRune(shown[:maxInlineText])
		note = fmt.Sprintf("\n[only the first %s of %s are shown; the whole file is %s]", chat.ByteSize(len(shown)), chat.ByteSize(len(data)), rel)
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

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
