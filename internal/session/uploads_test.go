package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A photo and a document reach the model with the text: each saved under
// uploads/ in the workspace and named in a note, the image also as an
// image; the transcript keeps the image as a file, and a restart sends it
// again.
func TestFilesTheUserSends(t *testing.T) {
	answer := func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "got them"}, nil }
	e := newEnv(t, answer, envOptions{})
	png := fakemcp.PNG1x1()
	pdf := []byte("%PDF-1.4 tiny")
	if err := e.manager.Deliver(chat.In(3), Message{Text: "what are these?", Files: []Attachment{
		{MIMEType: "image/png", Data: png},
		{Name: "../../Q3 report.pdf", MIMEType: "application/pdf", Data: pdf}}}); err != nil {
		t.Fatal(err)
	}
	e.chat.waitTexts(t, chat.In(3), 1)

	msgs := e.model.Requests()[0].Messages
	user := msgs[len(msgs)-1]
	if len(user.Parts) != 2 || user.Parts[0].Kind != llm.PartText || user.Parts[1].Kind != llm.PartImage ||
		!bytes.Equal(user.Parts[1].Image.Data, png) {
		t.Fatalf("user message: %+v", user)
	}
	text := user.Parts[0].Text
	for _, want := range []string{"what are these?", "[The user sent an image, saved in the workspace as uploads/photo-",
		fmt.Sprintf(".png (image/png, %d bytes).]", len(png)), "[The user sent a file, saved in the workspace as uploads/Q3_report.pdf (application/pdf, 13 bytes).]"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	ws := e.manager.Workspace(chat.In(3))
	if got, err := os.ReadFile(filepath.Join(ws, "uploads", "Q3_report.pdf")); err != nil || !bytes.Equal(got, pdf) {
		t.Errorf("saved document: %q %v", got, err)
	}
	if photos, _ := filepath.Glob(filepath.Join(ws, "uploads", "photo-*.png")); len(photos) != 1 {
		t.Errorf("saved photos: %v", photos)
	}

	// The same name again gets a new one; the first file stays.
	if err := e.manager.Deliver(chat.In(3), Message{Files: []Attachment{{Name: "Q3 report.pdf", MIMEType: "application/pdf", Data: []byte("v2")}}}); err != nil {
		t.Fatal(err)
	}
	e.chat.waitTexts(t, chat.In(3), 2)
	if got, _ := os.ReadFile(filepath.Join(ws, "uploads", "Q3_report-2.pdf")); string(got) != "v2" {
		t.Errorf("second upload: %q", got)
	}

	// After a restart the image is read back from the transcript's files.
	e.close()
	e2 := newEnv(t, answer, envOptions{dataDir: e.dataDir})
	e2.deliver(chat.In(3), "and now?")
	e2.chat.waitTexts(t, chat.In(3), 1)
	first := e2.model.Requests()[0].Messages[0]
	if len(first.Parts) != 2 || first.Parts[1].Image == nil || !bytes.Equal(first.Parts[1].Image.Data, png) {
		t.Errorf("after a restart the first message is %+v", first)
	}
}

func TestUploadName(t *testing.T) {
	long := strings.Repeat("é", 80) + ".tar.gz"
	for _, tc := range []struct {
		name, mime, want string
	}{
		{"report.pdf", "application/pdf", "report.pdf"},
		{"../../etc/passwd", "", "passwd"},
		{`C:\Users\me\notes.txt`, "text/plain", "notes.txt"},
		{"my file (1).docx", "", "my_file__1_.docx"},
		{"ça marche.txt", "", "ça_marche.txt"},
		{".bashrc", "", "bashrc"},
		{"..", "image/jpeg", "photo-20260102-030405-2.jpg"},
		{"", "image/png", "photo-20260102-030405-2.png"},
		{"", "application/zip", "file-20260102-030405-2"},
		{"rm -rf $(x);.sh", "", "rm_-rf___x__.sh"},
		{long, "", strings.Repeat("é", 48) + ".gz"},
	} {
		got := uploadName(Attachment{Name: tc.name, MIMEType: tc.mime}, "20260102-030405", 1)
		if got != tc.want {
			t.Errorf("uploadName(%q) = %q, want %q", tc.name, got, tc.want)
		}
		if len(got) > maxUploadName {
			t.Errorf("uploadName(%q) is %d bytes", tc.name, len(got))
		}
	}
}

// A text file is also shown in the message (its head when long); a
// binary one only by its path.
func TestTextFilesAreInlined(t *testing.T) {
	answer := func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "read"}, nil }
	e := newEnv(t, answer, envOptions{})
	long := strings.Repeat("é line of text\n", 3000) // 48,000 bytes, two-byte runes
	if err := e.manager.Deliver(chat.In(4), Message{Text: "summarize", Files: []Attachment{
		{Name: "notes.md", MIMEType: "text/markdown", Data: []byte("# Notes\nbuy milk")},
		{Name: "data.csv", MIMEType: "", Data: []byte("a,b\n1,2\n")},
		{Name: "long.txt", MIMEType: "text/plain", Data: []byte(long)},
		{Name: "doc.pdf", MIMEType: "application/pdf", Data: []byte("%PDF-1.4 binary\x00stuff")},
		{Name: "blob.bin", MIMEType: "application/octet-stream", Data: []byte("ab\x00cd")},
	}}); err != nil {
		t.Fatal(err)
	}
	e.chat.waitTexts(t, chat.In(4), 1)
	msgs := e.model.Requests()[0].Messages
	text := msgs[len(msgs)-1].Parts[0].Text
	for _, want := range []string{
		"--- uploads/notes.md ---\n# Notes\nbuy milk\n--- end of uploads/notes.md ---",
		"--- uploads/data.csv ---\na,b\n1,2\n\n--- end of uploads/data.csv ---",
		"[only the first 32 KB of 47 KB are shown; the whole file is uploads/long.txt]",
		"saved in the workspace as uploads/doc.pdf", "saved in the workspace as uploads/blob.bin",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if strings.Contains(text, "--- uploads/doc.pdf") || strings.Contains(text, "--- uploads/blob.bin") || strings.Contains(text, "\uFFFD") {
		t.Errorf("binary content or a broken rune in the message:\n%.300s", text)
	}
}

// A chat's server may replace the uploads folder with a symlink to another
// chat's workspace: the user's file is then not saved (they are told), and
// nothing lands in the other chat.
func TestAnUploadNeverLeavesTheWorkspace(t *testing.T) {
	e := newEnv(t, echoText, envOptions{})
	e.deliver(chat.In(3), "hello")
	e.chat.waitTexts(t, chat.In(3), 1)
	e.deliver(chat.In(4), "hello")
	e.chat.waitTexts(t, chat.In(4), 1)
	other := e.manager.Workspace(chat.In(4))
	if err := os.Symlink(other, filepath.Join(e.manager.Workspace(chat.In(3)), uploadsDir)); err != nil {
		t.Fatal(err)
	}
	if err := e.manager.Deliver(chat.In(3), Message{Text: "keep this", Files: []Attachment{
		{Name: "secret.pdf", MIMEType: "application/pdf", Data: []byte("%PDF chat 3's")}}}); err != nil {
		t.Fatal(err)
	}
	if got := e.chat.waitTexts(t, chat.In(3), 2); !strings.HasPrefix(got[1], "Sorry, I could not save") {
		t.Errorf("reply = %q, want the could-not-save reply", got[1])
	}
	entries, err := os.ReadDir(other)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "secret") {
			t.Errorf("chat 3's upload landed in chat 4's workspace: %s", en.Name())
		}
	}
}
