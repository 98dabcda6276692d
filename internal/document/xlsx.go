package document

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"
)

// maxSheetXMLInMemory is the largest sheet excelize keeps in memory; a
// larger one goes to a temporary file under Limits.TmpDir.
const maxSheetXMLInMemory = 16 << 20

// extractXLSX writes each sheet under a "--- sheet NAME ---" line, a row
// a line, its cells apart by tabs (the values as formatted), empty rows
// left out.
func extractXLSX(ctx context.Context, r io.ReaderAt, size int64, l Limits, out *textWriter) (Result, error) {
	// excelize trusts the sizes a zip's headers claim: first decompress
	// every member against the budget, so that one that lies is refused
	// before excelize reads it into memory.
	c, err := openZip(r, size, l)
	if err != nil {
		return Result{}, err
	}
	for _, f := range c.zr.File {
		rc, err := c.open(f)
		if err != nil {
			return Result{}, err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", f.Name, err)
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
	}
	book, err := excelize.OpenReader(io.NewSectionReader(r, 0, size), excelize.Options{
		UnzipSizeLimit: l.MaxUnzipped, UnzipXMLSizeLimit: min(maxSheetXMLInMemory, l.MaxUnzipped), TmpDir: l.TmpDir,
	})
	if err != nil {
		if strings.Contains(err.Error(), "password") || strings.Contains(err.Error(), "encrypt") {
			return Result{}, fmt.Errorf("open xlsx: %v: %w", err, ErrEncrypted)
		}
		return Result{}, fmt.Errorf("open xlsx: %v: %w", err, ErrDamaged)
	}
	defer book.Close()
	sheets := book.GetSheetList()
	res := Result{Pages: len(sheets)}
	for _, name := range sheets[:min(len(sheets), maxSheets)] {
		out.Blank()
		if _, err := fmt.Fprintf(out, "--- sheet %s ---\n", name); err != nil {
			return res, err
		}
		if err := writeSheet(ctx, book, name, out); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writeSheet writes the rows of one sheet.
func writeSheet(ctx context.Context, book *excelize.File, name string, out *textWriter) error {
	rows, err := book.Rows(name)
	if err != nil {
		return fmt.Errorf("sheet %q: %v: %w", name, err, ErrDamaged)
	}
	defer rows.Close()
	for n := 0; rows.Next() && n < maxRows; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		cols, err := rows.Columns()
		if err != nil {
			return fmt.Errorf("sheet %q: %v: %w", name, err, ErrDamaged)
		}
		line := strings.TrimRight(strings.Join(cols, "\t"), "\t ")
		if line == "" {
			continue
		}
		if _, err := out.WriteString(line); err != nil {
			return err
		}
		out.Break()
	}
	if err := rows.Error(); err != nil {
		return fmt.Errorf("sheet %q: %v: %w", name, err, ErrDamaged)
	}
	return nil
}
