package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Kind is a document format Extract reads.
type Kind string

const (
	KindNone Kind = ""     // not a document Extract reads
	KindText Kind = "text" // plain text, CSV, Markdown…: text as it is
	KindPDF  Kind = "pdf"
	KindDOCX Kind = "docx"
	KindXLSX Kind = "xlsx"
	KindHTML Kind = "html"
	KindEPUB Kind = "epub"
)

// Label is the kind's name for people ("PDF", "Word document").
func (k Kind) Label() string {
	switch k {
	case KindPDF:
		return "PDF"
	case KindDOCX:
		return "Word document"
	case KindXLSX:
		return "spreadsheet"
	case KindHTML:
		return "web page"
	case KindEPUB:
		return "e-book"
	}
	return "text"
}

// Detect is the kind of a file called name, of the MIME type the sender's
// client gave, starting with head: the name's extension and the type
// first, then the content (a PDF's %PDF-, an HTML tag). Zip containers are
// told apart by name or type only.
func Detect(name, mime string, head []byte) Kind {
	base, _, _ := strings.Cut(mime, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pdf":
		return KindPDF
	case ".docx":
		return KindDOCX
	case ".xlsx", ".xlsm":
		return KindXLSX
	case ".html", ".htm", ".xhtml":
		return KindHTML
	case ".epub":
		return KindEPUB
	case ".csv", ".tsv", ".txt", ".md", ".markdown":
		return KindText
	}
	switch base {
	case "application/pdf":
		return KindPDF
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return KindDOCX
	case "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
		return KindXLSX
	case "text/html", "application/xhtml+xml":
		return KindHTML
	case "application/epub+zip":
		return KindEPUB
	case "text/csv", "text/plain", "text/markdown", "text/tab-separated-values":
		return KindText
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return KindPDF
	case len(trimmed) > 5 && (bytes.EqualFold(trimmed[:5], []byte("<html")) || bytes.EqualFold(trimmed[:5], []byte("<!doc"))):
		return KindHTML
	}
	return KindNone
}

// Limits bound one extraction. Zero fields take the defaults below.
type Limits struct {
	// MaxInput is the largest document read (DefaultMaxInput).
	MaxInput int64
	// MaxUnzipped is the most bytes decompressed from a zip container
	// (DOCX, XLSX, EPUB) in all (DefaultMaxUnzipped).
	MaxUnzipped int64
	// MaxText is the most text returned, in bytes (DefaultMaxText); the
	// rest is cut and Result.Truncated says so.
	MaxText int
	// TmpDir is where a spreadsheet's large sheets are unpacked
	// (the system's temporary folder when empty).
	TmpDir string
}

const (
	// DefaultMaxInput is above Telegram's 20 MB download limit, for a
	// local Bot API server's larger files.
	DefaultMaxInput = 64 << 20
	// DefaultMaxUnzipped lets a zip bomb decompress this much before it
	// is refused: about a second's work, streamed, never held.
	DefaultMaxUnzipped = 128 << 20
	// DefaultMaxText is about a million tokens of text: more than any
	// model reads, enough for a long book.
	DefaultMaxText = 4 << 20
	// DefaultTimeout bounds one extraction (Runner).
	DefaultTimeout = 30 * time.Second
	// maxPages, maxSheets, maxRows bound the walks whose counts come from
	// the document itself.
	maxPages  = 10000
	maxSheets = 256
	maxRows   = 1000000
)

func (l Limits) withDefaults() Limits {
	if l.MaxInput <= 0 {
		l.MaxInput = DefaultMaxInput
	}
	if l.MaxUnzipped <= 0 {
		l.MaxUnzipped = DefaultMaxUnzipped
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	return l
}

// Result is a document's text.
type Result struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
	// Pages is a PDF's page count, an e-book's chapters, a spreadsheet's
	// sheets; 0 when the format has none.
	Pages int `json:"pages,omitempty"`
	// Truncated: the text stopped at Limits.MaxText.
	Truncated bool `json:"truncated,omitempty"`
	// Scanned: a PDF with pages but no text layer (scanned images).
	Scanned bool `json:"scanned,omitempty"`
}

// Error is a document that could not be read, with what to tell the user.
type Error struct {
	// User says what went wrong, for the user ("the PDF is damaged").
	User string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrTooLarge is a document, or what it decompresses to, over a
	// limit: the caller keeps the file and says it was not read.
	ErrTooLarge = errors.New("document over the size limit")
	// ErrDamaged is a document its parser refused or panicked on.
	ErrDamaged = errors.New("document damaged or not of its kind")
	// ErrEncrypted is a password-protected document.
	ErrEncrypted = errors.New("document encrypted")
)

// userText is what the user reads for err.
func userText(k Kind, err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.User
	case errors.Is(err, ErrTooLarge):
		return fmt.Sprintf("the %s is too large or too complex for me to read", k.Label())
	case errors.Is(err, ErrEncrypted):
		return fmt.Sprintf("the %s is protected by a password", k.Label())
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("reading the %s took too long", k.Label())
	case errors.Is(err, context.Canceled):
		return "reading it was stopped"
	}
	return fmt.Sprintf("the %s looks damaged or is not really a %s", k.Label(), k.Label())
}

// UserText is what the user reads when a document of kind k failed with
// err: lower-case, no file name, no detail an operator needs.
func UserText(k Kind, err error) string { return userText(k, err) }

// Extract reads the document r of size bytes as kind k. It stops when ctx
// ends (between pages, rows, members) and turns a parser's panic into
// ErrDamaged. In process it cannot stop a parser that loops or allocates
// without bound: run it through Runner for that.
func Extract(ctx context.Context, r io.ReaderAt, size int64, k Kind, l Limits) (res Result, err error) {
	l = l.withDefaults()
	if size > l.MaxInput {
		return Result{Kind: k}, fmt.Errorf("%d bytes: %w", size, ErrTooLarge)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{Kind: k}, fmt.Errorf("%s parser panicked: %v: %w", k, p, ErrDamaged)
		}
	}()
	out := newTextWriter(l.MaxText)
	switch k {
	case KindPDF:
		res, err = extractPDF(ctx, r, size, out)
	case KindDOCX:
		res, err = extractDOCX(ctx, r, size, l, out)
	case KindXLSX:
		res, err = extractXLSX(ctx, r, size, l, out)
	case KindHTML:
		err = extractHTML(ctx, io.NewSectionReader(r, 0, size), out)
	case KindEPUB:
		res, err = extractEPUB(ctx, r, size, l, out)
	case KindText:
		_, err = io.Copy(out, io.NewSectionReader(r, 0, size))
	default:
		return Result{Kind: k}, fmt.Errorf("no reader for %q", k)
	}
	if errors.Is(err, errFull) {
		err = nil
	}
	res.Kind, res.Text, res.Truncated = k, out.String(), out.full
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}
