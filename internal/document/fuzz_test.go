package document

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
)

// fuzzExtract feeds hostile bytes to one format's reader: it returns
// (never panics, hangs or grows past its caps) and its text is valid
// UTF-8 within MaxText, lines within maxLine+wrapSlack.
func fuzzExtract(f *testing.F, k Kind, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkExtract(t, data, k) })
}

// checkExtract extracts data as k: it returns within its time, and its
// text is valid UTF-8 within MaxText, lines within maxLine+wrapSlack.
func checkExtract(t *testing.T, data []byte, k Kind) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l := Limits{MaxText: 64 << 10, MaxUnzipped: 8 << 20, TmpDir: t.TempDir()}
	done := make(chan Result, 1)
	go func() {
		var res Result
		if k == KindPDF {
			// The pdf library can loop without end (an unterminated hex
			// string): only the child's deadline stops it, so PDFs are
			// fuzzed through the child.
			r := &Runner{Command: []string{os.Args[0]}, Env: []string{serveEnv + "=1"}, Timeout: 3 * time.Second, Limits: l}
			f, err := os.CreateTemp(t.TempDir(), "pdf")
			if err == nil {
				_, err = f.Write(data)
			}
			if err == nil {
				res, _ = r.Extract(ctx, f, k)
			}
			f.Close()
		} else {
			res, _ = Extract(ctx, bytes.NewReader(data), int64(len(data)), k, l)
		}
		done <- res
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<16)
		n := runtime.Stack(buf, true)
		t.Fatalf("Extract still runs after 10 s:\n%s", buf[:n])
	}
	if len(res.Text) > l.MaxText || !utf8.ValidString(res.Text) {
		t.Fatalf("text of %d bytes, valid UTF-8 %v", len(res.Text), utf8.ValidString(res.Text))
	}
	for _, line := range bytes.Split([]byte(res.Text), []byte("\n")) {
		if len(line) > maxLine+wrapSlack+utf8.UTFMax {
			t.Fatalf("a line of %d bytes", len(line))
		}
	}
}

func FuzzExtractPDF(f *testing.F) {
	fuzzExtract(f, KindPDF, documenttest.PDF(f, "fuzz me"), documenttest.NestedPDF(50), documenttest.ScannedPDF(f, 1))
}

// FuzzExtractPDFContent fuzzes the content stream interpreter, inside a
// valid file (mutated files mostly fail at the cross-reference table).
func FuzzExtractPDFContent(f *testing.F) {
	f.Add([]byte("BT /F1 12 Tf 72 720 Td (Hello volcano) Tj ET"))
	f.Add([]byte("BT /F1 12 Tf [(A) -20 (B)] TJ T* (C) ' ET"))
	// Found by this fuzzer: a stream ending inside a hex string (<…) makes
	// ledongthuc/pdf loop for ever; the child's deadline ends it.
	f.Add([]byte("\x86\xd0\x1fy\xc7\tPo\x8b\x98\x92\x18\xc1<e"))
	f.Fuzz(func(t *testing.T, content []byte) { checkExtract(t, documenttest.PDFContent(content), KindPDF) })
}

// FuzzExtractPDFToUnicode fuzzes the ToUnicode map reader and the codes
// shown with it, in a valid file.
func FuzzExtractPDFToUnicode(f *testing.F) {
	f.Add([]byte(identityCMap), []byte("<03A603AC> Tj [<0061> -250 <0062>] TJ"))
	f.Add([]byte(mixedCMap), []byte("<000100020003001000200021009900> Tj"))
	f.Add([]byte("1 begincodespacerange <00> <80> endcodespacerange 1 beginbfrange <20> <7e> [(a) <0062>] endbfrange"), []byte("(abc\\201) Tj"))
	f.Fuzz(func(t *testing.T, cmap, shown []byte) {
		content := "BT /F1 12 Tf " + string(shown) + " ET"
		checkExtract(t, documenttest.PDFToUnicode(string(cmap), content), KindPDF)
	})
}

// The zip containers are fuzzed through their XML: mutated zip bytes
// mostly fail the checksum, so the fuzzer's input is the main part, put
// into an otherwise valid container.

func FuzzExtractDOCX(f *testing.F) {
	seed := documenttest.DOCX(f, "a", "b<c>")
	f.Add(member(f, seed, "word/document.xml"))
	fuzzPart(f, KindDOCX, seed, "word/document.xml")
}

func FuzzExtractXLSX(f *testing.F) {
	seed := documenttest.XLSX(f, [][]any{{"a", 1}, {"b", 2.5}})
	f.Add(member(f, seed, "xl/worksheets/sheet1.xml"))
	f.Add(member(f, seed, "xl/sharedStrings.xml"))
	fuzzPart(f, KindXLSX, seed, "xl/worksheets/sheet1.xml")
}

func FuzzExtractEPUB(f *testing.F) {
	seed := documenttest.EPUB(f, "one", "two")
	f.Add(member(f, seed, "OEBPS/content.opf"))
	fuzzPart(f, KindEPUB, seed, "OEBPS/content.opf")
}

// fuzzPart fuzzes kind with the member name of seed replaced by the input.
func fuzzPart(f *testing.F, k Kind, seed []byte, name string) {
	f.Fuzz(func(t *testing.T, part []byte) {
		data := replaced(t, seed, name, part)
		checkExtract(t, data, k)
	})
}

// member is the content of name in the zip data.
func member(tb testing.TB, data []byte, name string) []byte {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				tb.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				tb.Fatal(err)
			}
			return b
		}
	}
	tb.Fatalf("no %s", name)
	return nil
}

// replaced is the zip data with the member name holding part.
func replaced(tb testing.TB, data []byte, name string, part []byte) []byte {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		w, err := zw.Create(f.Name)
		if err != nil {
			tb.Fatal(err)
		}
		if f.Name == name {
			w.Write(part)
			continue
		}
		w.Write(member(tb, data, f.Name))
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

func FuzzExtractHTML(f *testing.F) {
	fuzzExtract(f, KindHTML, []byte("<html><head><script>x</script></head><body><p>a<br>b</p><table><tr><td>1</td></tr></table></body></html>"),
		[]byte("<body><head><p>unclosed"))
}
