// Package documenttest makes documents for tests, generated rather than
// committed: PDFs, Word files, spreadsheets and e-books with known text,
// and bombs — files a few megabytes small that unpack to gigabytes.
package documenttest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"sort"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
	"github.com/xuri/excelize/v2"
)

// PDF is a PDF with one page per text (Helvetica, a text layer).
func PDF(t testing.TB, pages ...string) []byte {
	t.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	for _, text := range pages {
		p.AddPage()
		p.SetFont("Helvetica", "", 12)
		p.MultiCell(0, 6, text, "", "L", false)
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ScannedPDF is a PDF of pages with drawings and no text, as a scanner
// makes them (with images).
func ScannedPDF(t testing.TB, pages int) []byte {
	t.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	for range pages {
		p.AddPage()
		p.SetFillColor(40, 40, 40)
		p.Rect(20, 20, 100, 60, "F")
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// DOCX is a Word document of paragraphs.
func DOCX(t testing.TB, paragraphs ...string) []byte {
	t.Helper()
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, escape(p))
	}
	return zipOf(t, map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `</w:body></w:document>`,
	})
}

// XLSX is a spreadsheet whose sheet "Data" holds rows.
func XLSX(t testing.TB, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Data"); err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if err := f.SetSheetRow("Data", fmt.Sprintf("A%d", i+1), &row); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// EPUB is an e-book of chapters (XHTML), in spine order.
func EPUB(t testing.TB, chapters ...string) []byte {
	t.Helper()
	files := map[string]string{
		"mimetype":               "application/epub+zip",
		"META-INF/container.xml": `<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`,
	}
	var manifest, spine strings.Builder
	for i, c := range chapters {
		// Named so that zip order is not reading order.
		name := fmt.Sprintf("ch%d.xhtml", len(chapters)-i)
		fmt.Fprintf(&manifest, `<item id="c%d" href="%s" media-type="application/xhtml+xml"/>`, i, name)
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, i)
		files["OEBPS/"+name] = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title><style>p{}</style></head><body><p>` + escape(c) + `</p></body></html>`
	}
	files["OEBPS/content.opf"] = `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>` +
		manifest.String() + `</manifest><spine>` + spine.String() + `</spine></package>`
	return zipOf(t, files)
}

func escape(s string) string {
	var b strings.Builder
	if err := xmlEscape(&b, s); err != nil {
		panic(err)
	}
	return b.String()
}

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, name := range sortedKeys(files) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// block is how much one repeated deflate block holds.
const block = 1 << 20

// deflateRepeat is a raw deflate stream of prefix followed by n bytes
// (whole MiBs) of pattern repeated (its length dividing 1 MiB), made in
// milliseconds: once the window holds only the pattern, every 1 MiB
// block encodes the same, so one is compressed and repeated.
func deflateRepeat(prefix, pattern []byte, n int64) []byte {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, flate.BestCompression)
	chunk := bytes.Repeat(pattern, block/len(pattern))
	w.Write(prefix)
	w.Write(chunk)
	w.Flush()
	w.Write(chunk)
	w.Flush()
	head := out.Len()
	w.Write(chunk)
	w.Flush()
	one := append([]byte(nil), out.Bytes()[head:]...)
	var s bytes.Buffer
	s.Write(out.Bytes()[:head])
	for i := int64(2); i < n/block; i++ {
		s.Write(one)
	}
	s.Write([]byte{3, 0}) // an empty final block
	return s.Bytes()
}

// ZipBomb is a container (DOCX, XLSX or EPUB, by member) whose member
// unpacks to open and then n bytes (whole MiBs) of spaces: a file about a
// thousandth of that. The zip's sizes and CRC are true.
func ZipBomb(t testing.TB, member, open string, n int64) []byte {
	t.Helper()
	data := deflateRepeat([]byte(open), []byte{' '}, n)
	crc := crc32.ChecksumIEEE([]byte(open))
	chunk := bytes.Repeat([]byte{' '}, block)
	for i := int64(0); i < n/block; i++ {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	extra := map[string]string{}
	switch member {
	case "word/document.xml":
		extra["[Content_Types].xml"] = `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`
	case "xl/worksheets/sheet1.xml":
		extra["[Content_Types].xml"] = `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`
		extra["xl/workbook.xml"] = `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`
	default:
		extra["META-INF/container.xml"] = `<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>`
		extra["content.opf"] = `<package><manifest><item id="a" href="` + member + `"/></manifest><spine><itemref idref="a"/></spine></package>`
	}
	for _, name := range sortedKeys(extra) {
		w, _ := z.Create(name)
		w.Write([]byte(extra[name]))
	}
	w, err := z.CreateRaw(&zip.FileHeader{Name: member, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(int64(len(open)) + n)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PDFBomb is a one-page PDF whose content stream inflates to n bytes
// (whole MiBs) of "0 ", numbers a content interpreter keeps on its stack;
// the file is about a thousandth of n.
func PDFBomb(n int64) []byte {
	var z bytes.Buffer
	z.Write([]byte{0x78, 0xda}) // zlib, best compression
	z.Write(deflateRepeat(nil, []byte("0 "), n))
	one := adler32.Checksum(bytes.Repeat([]byte("0 "), block/2))
	sum := uint32(1) // the Adler-32 of nothing
	for i := int64(0); i < n/block; i++ {
		sum = adler32Combine(sum, one, block)
	}
	z.Write(binary.BigEndian.AppendUint32(nil, sum))
	return pdfOf("<< /Font << >> >>", fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>", z.Len()), z.Bytes())
}

// NestedPDF is a one-page PDF whose page's resources hold an array nested
// depth deep: a recursive parser runs out of stack.
func NestedPDF(depth int) []byte {
	nested := "<< /X " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + " >>"
	return pdfOf(nested, "<< /Length 0 >>", nil)
}

// PDFContent is a one-page PDF whose page's content stream is content
// (uncompressed), with a Helvetica font called F1.
func PDFContent(content []byte) []byte {
	return pdfOf("<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>",
		fmt.Sprintf("<< /Length %d >>", len(content)), content)
}

// PDFToUnicode is a one-page PDF showing content (uncompressed) in a
// two-byte font F1 (Type0, Identity-H) whose ToUnicode map is cmap; a
// second font F2 (Helvetica, WinAnsi) has no map.
func PDFToUnicode(cmap, content string) []byte {
	const fonts = "<< /Font << /F1 << /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /ToUnicode 5 0 R >> " +
		"/F2 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >> >> >>"
	return pdfOf(fonts, fmt.Sprintf("<< /Length %d >>", len(content)), []byte(content), []byte(cmap))
}

// pdfOf is a PDF of one page with resources, and a content stream of
// dict and data, then the streams more (5 0 R on), with a true
// cross-reference table.
func pdfOf(resources, dict string, data []byte, more ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	var offsets []int
	obj := func(body string, stream []byte) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\n", len(offsets), body)
		if stream != nil || strings.Contains(body, "/Length") {
			b.WriteString("stream\n")
			b.Write(stream)
			b.WriteString("\nendstream\n")
		}
		b.WriteString("endobj\n")
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "+resources+" /Contents 4 0 R >>", nil)
	obj(dict, data)
	for _, m := range more {
		obj(fmt.Sprintf("<< /Length %d >>", len(m)), m)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func xmlEscape(b *strings.Builder, s string) error { return xml.EscapeText(b, []byte(s)) }

// adler32Combine is the Adler-32 of a followed by b, from their sums and
// b's length (as zlib's adler32_combine): checksumming gigabytes in pure
// Go takes minutes under the race detector.
func adler32Combine(a, b uint32, lenB int64) uint32 {
	const mod = 65521
	rem := uint64(lenB % mod)
	a1, b1 := uint64(a&0xffff), uint64(a>>16)
	a2, b2 := uint64(b&0xffff), uint64(b>>16)
	sumA := (a1 + a2 + mod - 1) % mod
	sumB := (b1 + b2 + rem*a1 + mod - rem) % mod
	return uint32(sumB<<16 | sumA)
}
