package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// maxLocalGrowth is the most the bot's peak resident memory may grow
// while an 80 MB document comes from a local Bot API server's disk into
// the workspace: the turn (its request holds the document's first
// 32 KB), nothing of the file's size.
const maxLocalGrowth = 8 << 20

// The real binary, in a process of its own, against the fake Bot API as
// a local server in --local mode (getFile answers with a path on its
// disk, here a temporary folder the bot is given as
// TELEGRAM_LOCAL_FILES_DIR): an 80 MB text document reaches the workspace
// whole and the model reads its head, with the bot's peak resident memory
// (VmHWM) grown by less than maxLocalGrowth; a document over
// TELEGRAM_MAX_FILE_MB and a 30 MB voice note get the too-big replies; a
// path into another bot's folder gets a refusal; the token is in no log
// line.
//
//	go test -run TestLocalBotAPIServerPeakMemoryOfTheBinary -v ./cmd/volcanicbot/
func TestLocalBotAPIServerPeakMemoryOfTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tg := newTelegram(t)
	local := t.TempDir()
	tg.ServeLocal(local)
	model := llmtest.NewOpenAI(t)
	for range 5 {
		model.Push(llmtest.Func(func(llmtest.Request) llmtest.Reply { return llmtest.Text("read it") }))
	}
	bot := startBinaryBot(t, tg, model.URL, "TELEGRAM_LOCAL_FILES_DIR="+local, "TELEGRAM_MAX_FILE_MB=100",
		"CHAT_DISK_BUDGET_MB=1", "LOG_LEVEL=debug", "STT_BASE_URL="+model.URL, "STT_API_KEY=stt-key-123")
	logs, data := bot.logs, bot.data

	// A small document first: the chat's first turn (its session, the
	// catalogue, the model client) is not what is measured.
	small := tg.LocalPath(local, "documents", "file_99.txt")
	writeLines(t, small, 64<<10)
	tg.DocumentAt(alice, alice, "small.txt", "text/plain", small, 0, "and this?")
	if err := tg.WaitUntil(func() bool { return len(model.Requests()) == 1 && len(tg.Texts(alice)) == 1 }, 60*time.Second); err != nil {
		t.Fatalf("no model request: %v; chat: %q", err, tg.Texts(alice))
	}
	const size = 80 << 20
	path := tg.LocalPath(local, "documents", "file_100.txt")
	writeLines(t, path, size)
	start := peak(t, bot.pid())
	began := time.Now()
	tg.DocumentAt(alice, alice, "eruptions.txt", "text/plain", path, 0, "what is in it?")
	if err := tg.WaitUntil(func() bool { return len(model.Requests()) == 2 }, 60*time.Second); err != nil {
		t.Fatalf("no model request: %v; chat: %q", err, tg.Texts(alice))
	}
	grown := peak(t, bot.pid()) - start
	t.Logf("80 MB document to the model in %v; bot VmHWM %s before, grown by %s (limit %s)",
		time.Since(began).Round(time.Millisecond), mib(start), mib(grown), mib(maxLocalGrowth))
	body := string(model.Requests()[1].Body)
	for _, w := range []string{"line 000001: the Misti erupted", "uploads/eruptions.txt", "80.0 MB", "what is in it?"} {
		if !strings.Contains(body, w) {
			t.Errorf("the model's request lacks %q:\n%.2000s", w, body)
		}
	}
	saved, err := os.Stat(filepath.Join(data, "chats", fmt.Sprint(alice), "uploads", "eruptions.txt"))
	if err != nil || saved.Size() != size {
		t.Errorf("the workspace's copy: %v, %v; want %d bytes", saved, err, size)
	}
	if grown > maxLocalGrowth {
		t.Errorf("the bot's peak memory grew by %s receiving an 80 MB document; want under %s", mib(grown), mib(maxLocalGrowth))
	}

	steps := []struct {
		name  string
		send  func()
		reply string
	}{
		{"200 MB over TELEGRAM_MAX_FILE_MB", func() {
			tg.DocumentStream(alice, alice, "film.mkv", "video/x-matroska", 200<<20, 200<<20, "")
		}, "That file is too big for me: I receive files up to 100 MB."},
		{"30 MB voice note", func() { tg.Voice(alice, alice, make([]byte, 30<<20), 60, 0, "") }, "I transcribe files up to 25 MB"},
		{"another bot's folder", func() {
			other := filepath.Join(local, "987654321:AAOtherBotsToken", "documents", "file_1.txt")
			writeLines(t, other, 1<<10)
			tg.DocumentAt(alice, alice, "other.txt", "text/plain", other, 0, "")
		}, "Sorry, I could not receive that file."},
	}
	for _, s := range steps {
		began, seen := time.Now(), len(tg.Texts(alice))
		s.send()
		if err := tg.WaitUntil(func() bool { return anyContains(tg.Texts(alice)[seen:], s.reply) }, 60*time.Second); err != nil {
			t.Fatalf("%s: the chat never got %q: %q", s.name, s.reply, tg.Texts(alice))
		}
		t.Logf("%-34s answered in %6v; bot VmHWM %s", s.name, time.Since(began).Round(time.Millisecond), mib(peak(t, bot.pid())))
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests; want 2 (the refused files reach no model)", n)
	}
	secret := strings.SplitN(tg.Token(), ":", 2)[1]
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the token is in the bot's log")
	}
	if !strings.Contains(logs.String(), "not in this bot's folder") {
		t.Errorf("the log does not say why the other bot's file was refused")
	}
}

// writeLines writes size bytes of numbered lines at path, a line at a
// time (never held whole).
func writeLines(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for n, i := 0, 1; n < size; i++ {
		line := fmt.Sprintf("line %06d: the Misti erupted, and the ash fell on Arequipa for the %dth time.\n", i, i)
		if n+len(line) > size {
			line = strings.Repeat(".", size-n-1) + "\n"
		}
		k, _ := w.WriteString(line)
		n += k
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
