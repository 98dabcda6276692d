package document

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
)

// extractDOCX writes the text of word/document.xml: paragraphs as lines,
// table cells apart by tabs, rows as lines.
func extractDOCX(ctx context.Context, r io.ReaderAt, size int64, l Limits, out *textWriter) (Result, error) {
	c, err := openZip(r, size, l)
	if err != nil {
		return Result{}, err
	}
	f := c.find("word/document.xml")
	if f == nil {
		return Result{}, fmt.Errorf("no word/document.xml: %w", ErrDamaged)
	}
	rc, err := c.open(f)
	if err != nil {
		return Result{}, err
	}
	defer rc.Close()
	inText := false
	err = xmlText(ctx, rc, func(s xml.StartElement) error {
		var err error
		switch s.Name.Local {
		case "t", "delText":
			inText = s.Name.Local == "t"
		case "tab":
			_, err = out.WriteString("\t")
		case "br", "cr":
			out.Break()
		}
		return err
	}, func(e xml.EndElement) error {
		var err error
		switch e.Name.Local {
		case "t", "delText":
			inText = false
		case "p", "tr":
			out.Break()
		case "tc":
			_, err = out.WriteString("\t")
		}
		return err
	}, func(b []byte) error {
		if !inText {
			return nil
		}
		_, err := out.Write(b)
		return err
	})
	return Result{}, err
}
