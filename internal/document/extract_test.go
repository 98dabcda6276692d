package document

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
)

// serveEnv makes the test binary the extraction child (Runner's Command).
const serveEnv = "DOCUMENT_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		os.Exit(Serve(os.Args[1:], os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

func extract(t *testing.T, data []byte, k Kind, l Limits) (Result, error) {
	t.Helper()
	return Extract(context.Background(), bytes.NewReader(data), int64(len(data)), k, l)
}

// Each format's text comes out, in reading order.
func TestExtractFormats(t *testing.T) {
	cases := []struct {
		name  string
		kind  Kind
		data  []byte
		want  []string // in this order
		pages int
	}{
		{"pdf", KindPDF, documenttest.PDF(t, "Volcanoes of Peru: Misti", "Page two: Ubinas erupted"), []string{"--- page 1 ---", "Misti", "--- page 2 ---", "Ubinas erupted"}, 2},
		{"docx", KindDOCX, documenttest.DOCX(t, "First paragraph <about> lava", "Second & last"), []string{"First paragraph <about> lava\nSecond & last"}, 0},
		{"xlsx", KindXLSX, documenttest.XLSX(t, [][]any{{"volcano", "height"}, {"Misti", 5822}, {"Ubinas", 5672}}),
			[]string{"--- sheet Data ---", "volcano\theight\nMisti\t5822\nUbinas\t5672"}, 1},
		{"html", KindHTML, []byte(`<!DOCTYPE html><html><head><title>x</title><script>alert("no")</script></head><body><h1>Lava</h1><p>flows   slowly<br>downhill</p><table><tr><td>a</td><td>b</td></tr></table></body></html>`),
			[]string{"Lava\n\nflows slowly\ndownhill", "a\tb"}, 0},
		{"epub", KindEPUB, documenttest.EPUB(t, "Chapter one: the crater", "Chapter two: the ash"), []string{"Chapter one: the crater", "Chapter two: the ash"}, 2},
		{"text", KindText, []byte("a,b\r\n1,2\r\n"), []string{"a,b\n1,2"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := extract(t, tc.data, tc.kind, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(res.Text[at:], w)
				if i < 0 {
					t.Fatalf("text lacks %q after %d:\n%s", w, at, res.Text)
				}
				at += i + len(w)
			}
			if strings.Contains(res.Text, "alert") || strings.Contains(res.Text, "<title>") {
				t.Errorf("script or head in the text:\n%s", res.Text)
			}
			if res.Pages != tc.pages || res.Kind != tc.kind || res.Truncated || res.Scanned {
				t.Errorf("result %+v, want %d pages", res, tc.pages)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name, mime string
		head       string
		want       Kind
	}{
		{"Report.PDF", "", "", KindPDF},
		{"x", "application/pdf", "", KindPDF},
		{"noname", "application/octet-stream", "%PDF-1.7\n", KindPDF},
		{"a.docx", "application/octet-stream", "PK", KindDOCX},
		{"a", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "PK", KindXLSX},
		{"data.csv", "application/vnd.ms-excel", "a,b", KindText},
		{"page", "", "\n <!DOCTYPE html>", KindHTML},
		{"book.epub", "", "PK", KindEPUB},
		{"a.zip", "application/zip", "PK", KindNone},
		{"song.mp3", "audio/mpeg", "ID3", KindNone},
	}
	for _, tc := range cases {
		if got := Detect(tc.name, tc.mime, []byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q, %q, %q) = %q, want %q", tc.name, tc.mime, tc.head, got, tc.want)
		}
	}
}

// A PDF of drawings only is said to be scanned, not empty text.
func TestExtractScannedPDF(t *testing.T) {
	res, err := extract(t, documenttest.ScannedPDF(t, 3), KindPDF, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Scanned || res.Pages != 3 || res.Text != "" {
		t.Errorf("result %+v, want 3 scanned pages without text", res)
	}
}

// Text over the cap is cut with Truncated; long lines are wrapped.
func TestExtractCaps(t *testing.T) {
	long := strings.Repeat("word ", 3000) // one 15,000-byte paragraph
	res, err := extract(t, documenttest.DOCX(t, long, long, long), KindDOCX, Limits{MaxText: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Text) > 20000 || len(res.Text) < 19000 {
		t.Errorf("truncated %v, %d bytes", res.Truncated, len(res.Text))
	}
	for _, line := range strings.Split(res.Text, "\n") {
		if len(line) > maxLine+wrapSlack {
			t.Fatalf("a line of %d bytes", len(line))
		}
	}
	if _, err := extract(t, []byte("%PDF-1.4\n"), KindPDF, Limits{MaxInput: 4}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("input over MaxInput: %v", err)
	}
}

// Zip bombs stop at the decompression budget (8 MiB of the 64 MiB), in
// process.
func TestExtractZipBombs(t *testing.T) {
	const n = 64 << 20
	cases := []struct {
		kind           Kind
		member, opener string
	}{
		{KindDOCX, "word/document.xml", `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>`},
		{KindXLSX, "xl/worksheets/sheet1.xml", `<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>`},
		{KindEPUB, "ch1.xhtml", `<html><body><p>`},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			bomb := documenttest.ZipBomb(t, tc.member, tc.opener, n)
			if len(bomb) > 1<<20 {
				t.Fatalf("the bomb is %d bytes", len(bomb))
			}
			start := time.Now()
			_, err := extract(t, bomb, tc.kind, Limits{MaxUnzipped: 8 << 20})
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("err = %v, want ErrTooLarge", err)
			}
			if d := time.Since(start); d > time.Minute { // about 0.1 s; -race on a loaded machine is slow

				t.Errorf("took %v", d)
			}
			if got := UserText(tc.kind, err); !strings.Contains(got, "too large") {
				t.Errorf("user text %q", got)
			}
		})
	}
}

// A panic in a parser is an error, not the end of the process.
func TestExtractRecoversPanics(t *testing.T) {
	// A cross-reference that points past the end of the file makes the
	// pdf library index out of range in some versions; whatever it does,
	// Extract returns.
	for _, data := range [][]byte{
		[]byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R /Size 99999999 >>\nstartxref\n9\n%%EOF\n"),
		documenttest.NestedPDF(200),
	} {
		if _, err := extract(t, data, KindPDF, Limits{}); err == nil {
			t.Logf("no error (acceptable): the library read it")
		}
	}
}

func runner(t *testing.T) *Runner {
	t.Helper()
	return &Runner{Command: []string{os.Args[0]}, Env: []string{serveEnv + "=1"}, Timeout: 20 * time.Second, Limits: Limits{TmpDir: t.TempDir()}}
}

func tempFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Through the child: a document's text, and the bombs a process cannot
// survive in process — a stream inflating to gigabytes of stack pushes, a
// nesting a million deep — end the child with a clear error.
func TestRunner(t *testing.T) {
	r := runner(t)
	res, err := r.Extract(context.Background(), tempFile(t, documenttest.PDF(t, "hello from the child")), KindPDF)
	if err != nil || !strings.Contains(res.Text, "hello from the child") || res.Kind != KindPDF {
		t.Fatalf("Extract = %+v, %v", res, err)
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"inflating stream", documenttest.PDFBomb(4 << 30)},
		{"nested a million deep", documenttest.NestedPDF(1 << 20)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := r.Extract(context.Background(), tempFile(t, tc.data), KindPDF)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("%d-byte file: %v after %v", len(tc.data), err, time.Since(start))
			if got := UserText(KindPDF, err); got == "" {
				t.Error("no user text")
			}
		})
	}
	// A content stream ending inside a hex string makes the pdf library
	// loop for ever (found by FuzzExtractPDFContent): the child's deadline
	// ends it.
	r.Timeout = 2 * time.Second
	start := time.Now()
	_, err = r.Extract(context.Background(), tempFile(t, documenttest.PDFContent([]byte("BT (a) Tj ET <e"))), KindPDF)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("looping library: %v after %v", err, time.Since(start))
	}
	if got := UserText(KindPDF, err); got != "reading the PDF took too long" {
		t.Errorf("user text %q", got)
	}
	// A child that overruns its time is killed.
	r.Timeout = time.Nanosecond
	if _, err := r.Extract(context.Background(), tempFile(t, documenttest.PDF(t, "x")), KindPDF); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
}

// Children beyond Parallel wait for a slot: two endless extractions with
// one slot take two deadlines, one after the other.
func TestRunnerParallel(t *testing.T) {
	r := runner(t)
	r.Parallel, r.Timeout = 1, time.Second
	loop := documenttest.PDFContent([]byte("BT (a) Tj ET <e"))
	start := time.Now()
	errs := make(chan error, 2)
	for _, f := range []*os.File{tempFile(t, loop), tempFile(t, loop)} {
		go func() {
			_, err := r.Extract(context.Background(), f, KindPDF)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("two one-second extractions with one slot took %v", d)
	}
}

// A child whose parent is gone (killed, crashed: nobody kills the child
// at its deadline) ends itself soon after its own deadline, even in a
// parser that loops for ever. (An orphan of a killed fuzz worker ran for
// 26 minutes before.)
func TestChildEndsItself(t *testing.T) {
	req, err := json.Marshal(request{Kind: KindPDF, Limits: Limits{TmpDir: t.TempDir()}, Timeout: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], string(req))
	cmd.Env = []string{serveEnv + "=1"}
	cmd.Stdin = tempFile(t, documenttest.PDFContent([]byte("BT (a) Tj ET <e")))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute): // far past 1 s + childGrace: it would loop for ever
		cmd.Process.Kill()
		<-done
		t.Fatal("the child still runs a minute later")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(stderr.String(), "deadline") {
		t.Errorf("child ended with %v after %v: %s", err, time.Since(start), stderr.String())
	}
}
