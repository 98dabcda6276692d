package session

import (
	"context"
	"fmt"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/document"
	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// inProcess reads documents in this process (the binary's reader runs a
// child; the session cannot tell).
type inProcess struct{}

func (inProcess) Extract(ctx context.Context, f *os.File, k document.Kind) (document.Result, error) {
	fi, err := f.Stat()
	if err != nil {
		return document.Result{}, err
	}
	return document.Extract(ctx, f, fi.Size(), k, document.Limits{})
}

// failing is a reader whose every extraction fails with err.
type failing struct{ err error }

func (r failing) Extract(context.Context, *os.File, document.Kind) (document.Result, error) {
	return document.Result{}, r.err
}

// A long document: the model reads its head and where the rest is, and
// the line the note says to read on from is the first it was not shown.
func TestLongDocumentNote(t *testing.T) {
	var paras []string
	for i := 1; i <= 400; i++ {
		paras = append(paras, fmt.Sprintf("Paragraph %d about the crater.", i))
	}
	answer := func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "ok"}, nil }
	e := newEnv(t, answer, envOptions{documents: inProcess{}})
	if err := e.manager.Deliver(chat.In(3), Message{Text: "read this", Files: []Attachment{{Name: "long.docx", Data: documenttest.DOCX(t, paras...)}}}); err != nil {
		t.Fatal(err)
	}
	e.chat.waitTexts(t, chat.In(3), 1)
	msgs := e.model.Requests()[0].Messages
	text := msgs[len(msgs)-1].Parts[0].Text
	var shown, next int
	if _, err := fmt.Sscanf(text[strings.Index(text, "The first "):], "The first %d lines follow", &shown); err != nil {
		t.Fatalf("no head note: %v\n%.600s", err, text)
	}
	if _, err := fmt.Sscanf(text[strings.Index(text, "offset "):], "offset %d", &next); err != nil || next != shown+1 {
		t.Fatalf("offset %d after %d lines shown (%v)", next, shown, err)
	}
	body := text[strings.Index(text, "--- uploads/long.docx.txt ---\n")+len("--- uploads/long.docx.txt ---\n") : strings.Index(text, "\n--- end of")]
	if n := utf8.RuneCountInString(body); n > maxInlineDocument || n < maxInlineDocument/2 {
		t.Errorf("%d characters inlined, want up to %d", n, maxInlineDocument)
	}
	whole, err := os.ReadFile(filepath.Join(e.manager.Workspace(chat.In(3)), "uploads", "long.docx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(whole), "\n")
	if len(lines) != 400 || lines[shown-1] != strings.Split(body, "\n")[shown-1] || strings.Contains(body, lines[next-1]) {
		t.Errorf("%d lines; line %d is %q, and the head ends %q", len(lines), next, lines[next-1], body[len(body)-40:])
	}
}

// A document that cannot be read, and a scan, are told to the user and to
// the model; the file stays, and the user's words reach the model.
func TestDocumentsThatCannotBeRead(t *testing.T) {
	cases := []struct {
		name      string
		reader    DocumentReader
		file      Attachment
		chat      string
		modelNote string
	}{
		{"damaged", failing{fmt.Errorf("boom: %w", document.ErrDamaged)}, Attachment{Name: "a.pdf", MIMEType: "application/pdf", Data: []byte("%PDF-")},
			"I could not read a.pdf: the PDF looks damaged or is not really a PDF. The file is saved as uploads/a.pdf.",
			"[The PDF could not be read: the PDF looks damaged or is not really a PDF. The user was told.]"},
		{"a bomb", failing{fmt.Errorf("child died: %w", document.ErrTooLarge)}, Attachment{Name: "b.docx", Data: []byte("PK")},
			"I could not read b.docx: the Word document is too large or too complex for me to read.", "[The Word document could not be read"},
		{"scanned", inProcess{}, Attachment{Name: "scan.pdf", Data: documenttest.ScannedPDF(t, 2)},
			"scan.pdf has 2 pages but no text layer", "[The PDF has 2 pages but no text layer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "answered"}, nil }
			e := newEnv(t, answer, envOptions{documents: tc.reader})
			if err := e.manager.Deliver(chat.In(3), Message{Text: "my words", Files: []Attachment{tc.file}}); err != nil {
				t.Fatal(err)
			}
			texts := e.chat.waitTexts(t, chat.In(3), 2)
			if !strings.Contains(texts[0], tc.chat) || texts[1] != "answered" {
				t.Errorf("the chat got %q, want %q first", texts, tc.chat)
			}
			msgs := e.model.Requests()[0].Messages
			text := msgs[len(msgs)-1].Parts[0].Text
			if !strings.Contains(text, "my words") || !strings.Contains(text, tc.modelNote) {
				t.Errorf("the model read:\n%s", text)
			}
			if _, err := os.Stat(filepath.Join(e.manager.Workspace(chat.In(3)), "uploads", tc.file.Name)); err != nil {
				t.Errorf("the file was not kept: %v", err)
			}
		})
	}
}

func TestHeadText(t *testing.T) {
	cases := []struct {
		text string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"ééééé", 5, "ééééé", false},
		{"ééééé", 3, "ééé", true},
		{"line one\nline two\nline three", 22, "line one\nline two", true},
		{"a\nbbbbbbbbbbbbbbbbbbbb", 10, "a\nbbbbbbbb", true}, // no line end in the second half
	}
	for _, tc := range cases {
		got, cut := headText(tc.text, tc.max)
		if got != tc.want || cut != tc.cut {
			t.Errorf("headText(%q, %d) = %q, %v; want %q, %v", tc.text, tc.max, got, cut, tc.want, tc.cut)
		}
	}
}

var _ DocumentReader = (*document.Runner)(nil)
