package document

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxZipMembers is the most members a container may list.
const maxZipMembers = 20000

// maxXMLPart is the most a document's main XML part (a Word body, a
// chapter) may unpack to: the XML decoder holds a run of text whole, so
// this also bounds its memory.
const maxXMLPart = 64 << 20

// container is a zip file whose members are read against one budget of
// decompressed bytes: a zip bomb stops at the budget, with ErrTooLarge.
type container struct {
	zr     *zip.Reader
	budget int64 // bytes left to decompress
}

func openZip(r io.ReaderAt, size int64, l Limits) (*container, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("open zip: %v: %w", err, ErrDamaged)
	}
	if len(zr.File) > maxZipMembers {
		return nil, fmt.Errorf("%d zip members: %w", len(zr.File), ErrTooLarge)
	}
	return &container{zr: zr, budget: l.MaxUnzipped}, nil
}

// find is the member called name (case-insensitive, as some writers
// differ in case), or nil.
func (c *container) find(name string) *zip.File {
	for _, f := range c.zr.File {
		if strings.EqualFold(f.Name, name) {
			return f
		}
	}
	return nil
}

// open reads member f, counted against the budget and at most maxXMLPart
// bytes of it.
func (c *container) open(f *zip.File) (io.ReadCloser, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open %s: %v: %w", f.Name, err, ErrDamaged)
	}
	return &budgetReader{rc: rc, c: c, left: maxXMLPart}, nil
}

// readAll reads member f whole, at most max bytes.
func (c *container) readAll(f *zip.File, max int64) ([]byte, error) {
	rc, err := c.open(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s over %d bytes: %w", f.Name, max, ErrTooLarge)
	}
	return data, nil
}

type budgetReader struct {
	rc   io.ReadCloser
	c    *container
	left int64 // of this member
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.c.budget <= 0 || b.left <= 0 {
		return 0, fmt.Errorf("decompressed over the limit: %w", ErrTooLarge)
	}
	p = p[:min(int64(len(p)), b.c.budget, b.left)]
	n, err := b.rc.Read(p)
	b.c.budget -= int64(n)
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, ErrTooLarge) {
		err = fmt.Errorf("%v: %w", err, ErrDamaged)
	}
	return n, err
}

func (b *budgetReader) Close() error { return b.rc.Close() }

// xmlText walks an XML stream: for each start and end element, and the
// character data, it calls the visitor. It checks ctx every few thousand
// tokens.
func xmlText(ctx context.Context, r io.Reader, start func(xml.StartElement) error, end func(xml.EndElement) error, text func([]byte) error) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrDamaged) {
				return err
			}
			return fmt.Errorf("xml: %v: %w", err, ErrDamaged)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			err = start(t)
		case xml.EndElement:
			err = end(t)
		case xml.CharData:
			err = text(t)
		}
		if err != nil {
			return err
		}
	}
}
