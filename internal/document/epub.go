package document

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// maxEPUBMeta bounds the container and package files (the chapter list).
const maxEPUBMeta = 4 << 20

// extractEPUB writes an e-book's chapters in reading order (the package's
// spine), each as a page; a book without a readable package file gives
// its XHTML members in zip order.
func extractEPUB(ctx context.Context, r io.ReaderAt, size int64, l Limits, out *textWriter) (Result, error) {
	c, err := openZip(r, size, l)
	if err != nil {
		return Result{}, err
	}
	chapters, err := c.epubSpine()
	if err != nil {
		return Result{}, err
	}
	res := Result{Pages: len(chapters)}
	for _, name := range chapters {
		f := c.find(name)
		if f == nil {
			continue
		}
		rc, err := c.open(f)
		if err != nil {
			return res, err
		}
		out.Blank()
		err = extractHTML(ctx, rc, out)
		rc.Close()
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// epubSpine is the chapters' member names in reading order.
func (c *container) epubSpine() ([]string, error) {
	var container struct {
		Rootfiles []struct {
			FullPath string `xml:"full-path,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	var pkg struct {
		Items []struct {
			ID   string `xml:"id,attr"`
			Href string `xml:"href,attr"`
		} `xml:"manifest>item"`
		Spine []struct {
			IDRef string `xml:"idref,attr"`
		} `xml:"spine>itemref"`
	}
	if err := c.readXML("META-INF/container.xml", &container); err == nil && len(container.Rootfiles) > 0 {
		opf := container.Rootfiles[0].FullPath
		if err := c.readXML(opf, &pkg); err == nil {
			href := map[string]string{}
			for _, it := range pkg.Items {
				if h, err := url.PathUnescape(it.Href); err == nil {
					href[it.ID] = path.Join(path.Dir(opf), h)
				}
			}
			var names []string
			for _, ref := range pkg.Spine {
				if h, ok := href[ref.IDRef]; ok {
					names = append(names, h)
				}
			}
			if len(names) > 0 {
				return names, nil
			}
		}
	}
	var names []string
	for _, f := range c.zr.File {
		switch strings.ToLower(path.Ext(f.Name)) {
		case ".xhtml", ".html", ".htm":
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no chapters: %w", ErrDamaged)
	}
	return names, nil
}

// readXML decodes the member name into v.
func (c *container) readXML(name string, v any) error {
	f := c.find(name)
	if f == nil {
		return fmt.Errorf("no %s: %w", name, ErrDamaged)
	}
	data, err := c.readAll(f, maxEPUBMeta)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v: %w", name, err, ErrDamaged)
	}
	return nil
}
