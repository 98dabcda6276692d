// Package document turns the documents users send into text the model can
// read: PDFs with a text layer, Word (.docx), Excel (.xlsx), web pages
// (.html) and e-books (.epub). Comma-separated and plain text files are
// text already (KindText): the caller shows them as they are.
//
// Every document is hostile input. Extract bounds what it reads and makes:
// the input's size (Limits.MaxInput), the bytes decompressed from a zip
// container (Limits.MaxUnzipped, and each member's share), the text it
// returns (Limits.MaxText, the rest cut with a note), the time (the
// context) and the pages, sheets and rows it visits; a panic in a parser
// is an error. What it cannot bound in process — a PDF stream that
// inflates to gigabytes inside the PDF library, a parser that loops — is
// bounded by running it in a child process (Runner, Serve) with a memory
// ceiling, a deadline, and nothing but the document's open file to read.
//
// Libraries: github.com/ledongthuc/pdf (the maintained text-extracting fork
// of rsc.io/pdf: pure Go, no cgo) parses PDFs and their content streams;
// the text is decoded here (pdftext.go: its reading of ToUnicode maps
// garbles every letter past U+00FF of the commonest map);
// github.com/xuri/excelize/v2 (the standard Go spreadsheet library, with
// zip and XML size limits and a streaming row reader) for spreadsheets;
// golang.org/x/net/html for web pages and an e-book's chapters; DOCX and
// EPUB are zip files of XML read here with archive/zip and encoding/xml's
// token stream, every member read through a counting limit (no maintained
// Go DOCX reader is both small and bounded).
package document
