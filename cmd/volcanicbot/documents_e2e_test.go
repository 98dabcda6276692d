package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A PDF, a Word document, a spreadsheet, an e-book and a web page sent in
// Telegram reach the model as their text, through the real binary (its
// extraction child is this test binary as volcanicbot extract-document):
// the original and its text are in the workspace.
func TestE2EDocumentsReachTheModel(t *testing.T) {
	cases := []struct {
		name, mime string
		data       []byte
		want       []string
	}{
		{"report.pdf", "application/pdf", documenttest.PDF(t, "The Misti volcano rises 5822 metres", "Page two: Ubinas is the most active"),
			[]string{"--- page 1 ---", "The Misti volcano rises 5822 metres", "Ubinas is the most active"}},
		{"notes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			documenttest.DOCX(t, "Meeting notes: evacuate the north valley", "Second paragraph & more"),
			[]string{"Meeting notes: evacuate the north valley", "Second paragraph & more"}},
		{"heights.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
			documenttest.XLSX(t, [][]any{{"volcano", "height"}, {"Misti", 5822}, {"Ubinas", 5672}}),
			[]string{"--- sheet Data ---", `volcano\theight`, `Misti\t5822`, `Ubinas\t5672`}},
		{"book.epub", "application/epub+zip", documenttest.EPUB(t, "Chapter one: the crater", "Chapter two: the ash"),
			[]string{"Chapter one: the crater", "Chapter two: the ash"}},
		{"page.html", "text/html", []byte("<html><head><script>var secret=1</script></head><body><h1>Ash fall</h1><p>Wear a mask.</p></body></html>"),
			[]string{`Ash fall\n\nWear a mask.`}},
	}
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply { return llmtest.Text("read it") }, daemonOptions{})
	for i, tc := range cases {
		d.tg.Document(alice, alice, tc.name, tc.mime, tc.data, 0, "what does it say?")
		if err := d.tg.WaitUntil(func() bool { return len(d.model.Requests()) == i+1 }, 30*time.Second); err != nil {
			t.Fatalf("%s: no model request: %v", tc.name, err)
		}
		d.waitSentCount(alice, i+1)
		body := string(d.model.Requests()[i].Body)
		for _, w := range append(tc.want, "uploads/"+tc.name+".txt", "what does it say?") {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the model's request lacks %q:\n%.3000s", tc.name, w, body)
			}
		}
		if strings.Contains(body, "secret=1") {
			t.Errorf("%s: a script reached the model", tc.name)
		}
		ws := filepath.Join(d.dataDir, "chats", fmt.Sprint(alice), "uploads")
		if orig, err := os.ReadFile(filepath.Join(ws, tc.name)); err != nil || len(orig) != len(tc.data) {
			t.Errorf("%s: the original was not kept: %v", tc.name, err)
		}
		if txt, err := os.ReadFile(filepath.Join(ws, tc.name+".txt")); err != nil || !strings.Contains(string(txt), unescape(tc.want[len(tc.want)-1])) {
			t.Errorf("%s: the text beside it: %v %q", tc.name, err, txt)
		}
	}
	if texts := d.texts(alice); len(texts) != len(cases) {
		t.Errorf("the chat got %q, want one answer a document and no complaint", texts)
	}
}

// unescape turns a JSON-escaped want back into text.
func unescape(s string) string {
	return strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(s)
}

// waitSentCount waits until chat was sent n messages.
func (d *daemon) waitSentCount(chat int64, n int) {
	d.t.Helper()
	if err := d.tg.WaitUntil(func() bool { return len(d.texts(chat)) >= n }, 30*time.Second); err != nil {
		d.t.Fatalf("chat %d got %q, want %d messages", chat, d.texts(chat), n)
	}
}

// A long document shows the model its head and where the rest is; the
// model reads the rest with read and a line range.
func TestE2ELongDocumentIsReadInParts(t *testing.T) {
	var pages []string
	for p := 1; p <= 12; p++ {
		pages = append(pages, fmt.Sprintf("Section %d. %s", p, strings.Repeat(fmt.Sprintf("Lava flow paragraph of section %d. ", p), 30)))
	}
	pdf := documenttest.PDF(t, pages...)
	var offset string
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			if strings.Contains(res, "Section 12.") {
				return llmtest.Text("read to the end")
			}
			return llmtest.Text("the end was missing: " + res[:min(len(res), 200)])
		}
		body := string(req.Body)
		m := regexp.MustCompile(`\(path uploads/long\.pdf\.txt, offset (\d+)\)`).FindStringSubmatch(body)
		if m == nil {
			return llmtest.Text("no offset given")
		}
		offset = m[1]
		return call("read", `{"path":"uploads/long.pdf.txt","offset":`+offset+`}`)
	}, daemonOptions{})
	d.tg.Document(alice, alice, "long.pdf", "application/pdf", pdf, 0, "")
	d.waitText(alice, "read to the end")
	first := string(d.model.Requests()[0].Body)
	if !strings.Contains(first, "Section 1.") || strings.Contains(first, "Section 12.") || !strings.Contains(first, "12 pages") {
		t.Errorf("the first request should hold the head only:\n%.1500s", first)
	}
}

// Bad documents get a clear reply and lose nothing: the file is kept,
// the user's words still reach the model, and the bot goes on. A 1 GB
// document (announced, or streamed under a small announced size) is
// refused without being read into memory; bombs end in the extraction
// child, not the bot. The test logs the bot process's peak memory.
func TestE2EBadDocuments(t *testing.T) {
	const gb = 1 << 30
	cases := []struct {
		name  string
		send  func(d *daemon)
		reply string // what the chat is told
		file  string // kept in uploads/, when the file came
	}{
		{"1 GB announced", func(d *daemon) {
			d.tg.DocumentStream(alice, alice, "huge.pdf", "application/pdf", gb, gb, "summarise this")
		}, "too big for me: Telegram lets bots receive files up to 20 MB", ""},
		{"1 GB streamed under a small size", func(d *daemon) {
			d.tg.DocumentStream(alice, alice, "liar.pdf", "application/pdf", 1000, gb, "summarise this")
		}, "too big for me", ""},
		{"PDF bomb: a stream inflating to 4 GB", func(d *daemon) {
			d.tg.Document(alice, alice, "bomb.pdf", "application/pdf", documenttest.PDFBomb(4<<30), 0, "summarise this")
		}, "I could not read bomb.pdf: ", "bomb.pdf"},
		{"PDF nested a million deep", func(d *daemon) {
			d.tg.Document(alice, alice, "deep.pdf", "application/pdf", documenttest.NestedPDF(1<<20), 0, "summarise this")
		}, "I could not read deep.pdf", "deep.pdf"},
		{"DOCX zip bomb (1 GB)", func(d *daemon) {
			d.tg.Document(alice, alice, "bomb.docx", "", documenttest.ZipBomb(t, "word/document.xml", "<w:document><w:body><w:p><w:r><w:t>", gb), 0, "summarise this")
		}, "I could not read bomb.docx: ", "bomb.docx"},
		{"XLSX zip bomb (1 GB)", func(d *daemon) {
			d.tg.Document(alice, alice, "bomb.xlsx", "", documenttest.ZipBomb(t, "xl/worksheets/sheet1.xml", "<worksheet><sheetData><row><c><is><t>", gb), 0, "summarise this")
		}, "I could not read bomb.xlsx: ", "bomb.xlsx"},
		{"EPUB zip bomb (1 GB)", func(d *daemon) {
			d.tg.Document(alice, alice, "bomb.epub", "", documenttest.ZipBomb(t, "ch1.xhtml", "<html><body><p>", gb), 0, "summarise this")
		}, "I could not read bomb.epub: ", "bomb.epub"},
		{"scanned PDF", func(d *daemon) {
			d.tg.Document(alice, alice, "scan.pdf", "application/pdf", documenttest.ScannedPDF(t, 2), 0, "summarise this")
		}, "scan.pdf has 2 pages but no text layer", "scan.pdf"},
		{"not a PDF at all", func(d *daemon) {
			d.tg.Document(alice, alice, "fake.pdf", "application/pdf", []byte("%PDF-1.7\nthis is not a pdf"), 0, "summarise this")
		}, "I could not read fake.pdf: the PDF looks damaged", "fake.pdf"},
	}
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text(fmt.Sprintf("answer %d", len(lastUserText(req))))
	}, daemonOptions{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			asked, seen := len(d.model.Requests()), len(d.tg.Sent(alice))
			tc.send(d)
			// A bomb's child ends by its limits or at its 30 s deadline
			// (under -race on a loaded machine, it can take that long), so
			// a bomb's reply is "too large" or "took too long" (which one,
			// internal/document's TestExtractZipBombs and TestRunner hold).
			d.waitTextWithin(alice, seen, tc.reply, 90*time.Second)
			// The user's words reached the model all the same.
			if err := d.tg.WaitUntil(func() bool { return len(d.model.Requests()) == asked+1 }, 60*time.Second); err != nil {
				t.Fatalf("the caption never reached the model: %v", err)
			}
			if body := string(d.model.Requests()[asked].Body); !strings.Contains(body, "summarise this") {
				t.Errorf("the request lacks the caption:\n%.2000s", body)
			}
			if tc.file != "" {
				if _, err := os.Stat(filepath.Join(d.dataDir, "chats", fmt.Sprint(alice), "uploads", tc.file)); err != nil {
					t.Errorf("the document was not kept: %v", err)
				}
			}
			t.Logf("answered in %v; the test process's peak memory so far: %s", time.Since(start).Round(time.Millisecond), peakMemory(t))
		})
	}
	// The announced gigabyte never reached getFile; the one streamed under
	// a small size was downloaded once, and stopped at the limit.
	if n := len(d.tg.RequestsFor("file")); n > len(cases)-1 {
		t.Errorf("%d downloads for %d documents: some were retried", n, len(cases))
	}
}

// peakMemory is this process's VmHWM (the bot and the fakes run in it).
func peakMemory(t *testing.T) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}
