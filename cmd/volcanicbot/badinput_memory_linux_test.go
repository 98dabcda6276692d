package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/document/documenttest"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/speech/speechtest"
)

// maxBotPeak is the most resident memory the bot process (built as its
// users run it, without the race detector) may reach while it refuses a
// 1 GB document, the bombs and 19 MB voice notes the speech service
// refuses: its own start (about 45 MiB), the documents it holds (75 MiB
// measured), and a voice note's 19 MB twice, as downloaded and as the
// transcription request's body (the garbage of the one before it still
// counted): 114–130 MiB measured. The bombs go off in the extraction
// child.
const maxBotPeak = 160 << 20

// The real binary, in a process of its own, against the fake Bot API,
// model and speech service: a 1 GB document (announced, and streamed
// under a small size), a PDF inflating to 4 GB, a PDF nested a million
// deep, zip bombs unpacking to 1 GB, a voice note announced as 1 GB and
// 19 MB voice notes the speech service refuses (corrupt audio: 400), fails
// (503) or answers with a web page each get their reply, leave the bot's
// peak resident memory (VmHWM) under maxBotPeak, and the bot answers a
// plain message afterwards.
//
//	go test -run TestBadInputPeakMemoryOfTheBinary -v ./cmd/volcanicbot/
func TestBadInputPeakMemoryOfTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tg := newTelegram(t)
	model := llmtest.NewOpenAI(t)
	stt := speechtest.New(t)
	for range 20 {
		model.Push(llmtest.Func(func(llmtest.Request) llmtest.Reply { return llmtest.Text("noted") }))
	}
	bot := startBinaryBot(t, tg, model.URL, "STT_BASE_URL="+stt.URL, "STT_API_KEY=stt-key-123")
	logs := bot.logs
	const gb = 1 << 30
	start := peak(t, bot.pid())
	steps := []struct {
		name  string
		send  func()
		reply string
	}{
		{"1 GB announced", func() { tg.DocumentStream(alice, alice, "huge.pdf", "application/pdf", gb, gb, "") }, "too big for me"},
		{"1 GB streamed under a small size", func() { tg.DocumentStream(alice, alice, "liar.pdf", "application/pdf", 1000, gb, "") }, "too big for me"},
		{"PDF inflating to 4 GB", func() { tg.Document(alice, alice, "bomb.pdf", "", documenttest.PDFBomb(4<<30), 0, "") }, "I could not read bomb.pdf"},
		{"PDF nested a million deep", func() { tg.Document(alice, alice, "deep.pdf", "", documenttest.NestedPDF(1<<20), 0, "") }, "I could not read deep.pdf"},
		{"DOCX unpacking to 1 GB", func() {
			tg.Document(alice, alice, "bomb.docx", "", documenttest.ZipBomb(t, "word/document.xml", "<w:document><w:body><w:p><w:r><w:t>", gb), 0, "")
		}, "I could not read bomb.docx"},
		{"XLSX unpacking to 1 GB", func() {
			tg.Document(alice, alice, "bomb.xlsx", "", documenttest.ZipBomb(t, "xl/worksheets/sheet1.xml", "<worksheet><sheetData><row><c><is><t>", gb), 0, "")
		}, "I could not read bomb.xlsx"},
		{"EPUB unpacking to 1 GB", func() {
			tg.Document(alice, alice, "bomb.epub", "", documenttest.ZipBomb(t, "ch1.xhtml", "<html><body><p>", gb), 0, "")
		}, "I could not read bomb.epub"},
		{"voice note announced as 1 GB", func() { tg.Voice(alice, alice, []byte(speechtest.Ogg), 60, gb, "") }, "too big for me"},
		{"corrupt 19 MB voice note, refused", func() {
			stt.Reply(http.StatusBadRequest, `{"error":{"message":"Invalid file format.","type":"invalid_request_error"}}`)
			tg.Voice(alice, alice, noise(19<<20), 60, 0, "")
		}, "refused the voice note (HTTP 400)"},
		{"19 MB voice note, STT down", func() {
			stt.Reply(http.StatusServiceUnavailable, "upstream connect error")
			tg.Voice(alice, alice, noise(19<<20), 60, 0, "")
		}, "refused the voice note (HTTP 503)"},
		{"19 MB voice note, STT garbage", func() {
			stt.Reply(http.StatusOK, "<html><body>It works!</body></html>")
			tg.Voice(alice, alice, noise(19<<20), 60, 0, "")
		}, "not a transcript"},
	}
	for _, s := range steps {
		began, seen := time.Now(), len(tg.Texts(alice))
		s.send()
		if err := tg.WaitUntil(func() bool { return anyContains(tg.Texts(alice)[seen:], s.reply) }, 60*time.Second); err != nil {
			t.Fatalf("%s: the chat never got %q: %q", s.name, s.reply, tg.Texts(alice))
		}
		t.Logf("%-34s answered in %6v; bot VmHWM %s", s.name, time.Since(began).Round(time.Millisecond), mib(peak(t, bot.pid())))
	}
	asked := len(model.Requests())
	tg.Message(alice, alice, "still there?")
	if err := tg.WaitUntil(func() bool { return len(model.Requests()) > asked }, 60*time.Second); err != nil {
		t.Fatalf("the bot stopped answering: %d model requests", len(model.Requests()))
	}
	// The extraction children's peaks, from the bot's log.
	for _, m := range regexp.MustCompile(`"file":"(uploads/[^"]+)".*?peak ([0-9.]+ MiB)`).FindAllStringSubmatch(logs.String(), -1) {
		t.Logf("extraction child of %-18s peak %s", m[1], m[2])
	}
	end := peak(t, bot.pid())
	t.Logf("bot VmHWM: %s polling, %s at the end (limit %s)", mib(start), mib(end), mib(maxBotPeak))
	if end > maxBotPeak {
		t.Errorf("the bot's peak memory %s is over %s", mib(end), mib(maxBotPeak))
	}
}

// noise is n bytes no audio decoder can read.
func noise(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7919 >> 3)
	}
	return b
}

func anyContains(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// peak is pid's VmHWM in bytes.
func peak(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
