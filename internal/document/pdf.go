package document

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// extractPDF writes the text layer of each page, under a "--- page N ---"
// line. A PDF whose pages hold no text at all is Scanned.
func extractPDF(ctx context.Context, r io.ReaderAt, size int64, out *textWriter) (Result, error) {
	doc, err := pdf.NewReader(r, size)
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || err == pdf.ErrInvalidPassword {
			return Result{}, fmt.Errorf("open pdf: %v: %w", err, ErrEncrypted)
		}
		return Result{}, fmt.Errorf("open pdf: %v: %w", err, ErrDamaged)
	}
	pages := doc.NumPage()
	if pages < 0 {
		pages = 0
	}
	res := Result{Pages: pages}
	seen := 0
	for i := 1; i <= min(pages, maxPages); i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		text, err := pageText(doc.Page(i))
		if err != nil {
			return res, fmt.Errorf("page %d: %v: %w", i, err, ErrDamaged)
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		seen++
		out.Blank()
		if _, err := fmt.Fprintf(out, "--- page %d ---\n", i); err != nil {
			return res, err
		}
		if _, err := out.WriteString(text); err != nil {
			return res, err
		}
	}
	res.Scanned = pages > 0 && seen == 0
	return res, nil
}
