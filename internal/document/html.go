package document

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxHTMLToken bounds the tokenizer's buffer: one tag or text run.
const maxHTMLToken = 1 << 20

// extractHTML writes a page's visible text: no scripts, styles or head;
// block elements on lines of their own, table cells apart by tabs. It
// streams tokens and never builds the tree (a deep page costs nothing).
func extractHTML(ctx context.Context, r io.Reader, out *textWriter) error {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxHTMLToken)
	skip := 0 // inside script, style, head…
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case errors.Is(err, html.ErrBufferExceeded):
				return fmt.Errorf("html token over %d bytes: %w", maxHTMLToken, ErrTooLarge)
			case errors.Is(err, ErrTooLarge), errors.Is(err, ErrDamaged):
				return err
			}
			return fmt.Errorf("html: %v: %w", err, ErrDamaged)
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if _, err := out.Write(collapseSpace(z.Text())); err != nil {
				return err
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Body { // a head never closed ends here
				skip = 0
			}
			switch a {
			case atom.Script, atom.Style, atom.Head, atom.Noscript, atom.Template, atom.Svg:
				switch {
				case tt == html.StartTagToken:
					skip++
				case tt == html.EndTagToken && skip > 0:
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			if err := htmlBreak(a, tt, out); err != nil {
				return err
			}
		}
	}
}

// htmlBreak writes what tag a means for the text's layout.
func htmlBreak(a atom.Atom, tt html.TokenType, out *textWriter) error {
	switch a {
	case atom.Br:
		out.Break()
	case atom.P, atom.Div, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Section, atom.Article,
		atom.Blockquote, atom.Pre, atom.Table, atom.Ul, atom.Ol, atom.Header, atom.Footer, atom.Main, atom.Hr:
		out.Blank()
	case atom.Li, atom.Tr, atom.Dt, atom.Dd, atom.Title, atom.Caption:
		out.Break()
	case atom.Td, atom.Th:
		if tt == html.EndTagToken {
			_, err := out.WriteString("\t")
			return err
		}
	}
	return nil
}

// collapseSpace turns runs of white space into one space.
func collapseSpace(b []byte) []byte {
	out := b[:0]
	space := false
	for _, c := range b {
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' {
			if !space {
				out = append(out, ' ')
			}
			space = true
			continue
		}
		space = false
		out = append(out, c)
	}
	return out
}
