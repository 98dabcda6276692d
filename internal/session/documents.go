package session

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/document"
)

// DocumentReader turns a document the user sent into text
// (*document.Runner: in a child process, bounded in memory and time).
type DocumentReader interface {
	Extract(ctx context.Context, f *os.File, k document.Kind) (document.Result, error)
}

// maxInlineDocument is how many characters of a document's text the
// model reads in the user's message itself (about 2,000 tokens); the
// whole text is saved beside the document, for the read tool.
const maxInlineDocument = 8000

// readDocument reads the document saved at rel (the i-th file of the
// message) into text, saves the text beside it as rel+".txt" and returns
// the note for the user's message: the text's head, and where the rest
// is. A document that cannot be read, or a scan without a text layer, is
// told to the user too; the document stays saved either way.
func (s *session) readDocument(ctx context.Context, rel string, kind document.Kind, i int) (string, error) {
	name := path.Base(rel)
	f, _, err := openWorkspaceFile(openBeneath, s.workspace, rel, ReadToolName)
	var res document.Result
	if err == nil {
		res, err = s.m.o.Documents.Extract(ctx, f, kind)
		f.Close()
	}
	switch {
	case err != nil:
		why := document.UserText(kind, err)
		s.m.logger.Warn("read a document", "chat", s.id, "file", rel, "kind", kind, "err", err)
		s.reply(ctx, fmt.Sprintf("I could not read %s: %s. The file is saved as %s.", name, why, rel))
		return fmt.Sprintf("[The %s could not be read: %s. The user was told.]", kind.Label(), why), nil
	case res.Scanned:
		s.reply(ctx, fmt.Sprintf("%s has %s but no text layer — scanned pages, I guess — so I cannot read its text. The file is saved as %s.",
			name, pagesText(kind, res.Pages), rel))
		return fmt.Sprintf("[The PDF has %s but no text layer: scanned images, whose text cannot be read here. The user was told.]",
			pagesText(kind, res.Pages)), nil
	case strings.TrimSpace(res.Text) == "":
		return fmt.Sprintf("[The %s holds no text.]", kind.Label()), nil
	}
	txt, err := s.saveUpload(Attachment{Name: name + ".txt", MIMEType: "text/plain", Data: []byte(res.Text)}, i)
	if err != nil {
		return "", &storageError{err: err}
	}
	return documentNote(kind, res, txt.rel), nil
}

// documentNote is what the model reads of a document whose text was
// saved at txt: the text up to maxInlineDocument characters (cut at a
// line end), and how to read the rest.
func documentNote(kind document.Kind, res document.Result, txt string) string {
	lines := strings.Count(res.Text, "\n") + 1
	what := kind.Label()
	if res.Pages > 0 {
		what += ", " + pagesText(kind, res.Pages)
	}
	var b strings.Builder
	shown, cut := headText(res.Text, maxInlineDocument)
	if !cut {
		fmt.Fprintf(&b, "[Its text (%s, %d lines) is saved as %s:]\n", what, lines, txt)
	} else {
		next := strings.Count(shown, "\n") + 2
		fmt.Fprintf(&b, "[Its text (%s, %d lines, %s) is saved as %s. The first %d lines follow; read the rest with %s (path %s, offset %d).]\n",
			what, lines, chat.ByteSize(len(res.Text)), txt, next-1, ReadToolName, txt, next)
	}
	fmt.Fprintf(&b, "--- %s ---\n%s\n--- end of %s ---", txt, shown, txt)
	if res.Truncated {
		fmt.Fprintf(&b, "\n[The document's text stops at %s: the rest of the document was not read.]", chat.ByteSize(len(res.Text)))
	}
	return b.String()
}

// headText is text's first max characters, cut after a line when one ends
// in the second half; cut says whether anything was left out.
func headText(text string, max int) (string, bool) {
	if utf8.RuneCountInString(text) <= max {
		return text, false
	}
	end := 0
	for n := 0; n < max; n++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	head := text[:end]
	if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
		head = head[:i]
	}
	return head, true
}

// pagesText counts a document's pages in its own words.
func pagesText(kind document.Kind, n int) string {
	unit := "page"
	switch kind {
	case document.KindXLSX:
		unit = "sheet"
	case document.KindEPUB:
		unit = "chapter"
	}
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", n, unit)
}
