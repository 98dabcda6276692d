package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// fullDisk is a transcript file on a disk that fills up: while room is
// not negative, writes beyond it are cut short with ENOSPC, as a full
// disk cuts them.
type fullDisk struct {
	transcriptFile
	mu   sync.Mutex
	room int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.room < 0 || len(p) <= d.room {
		if d.room >= 0 {
			d.room -= len(p)
		}
		return d.transcriptFile.Write(p)
	}
	n, err := d.transcriptFile.Write(p[:d.room])
	d.room = 0
	if err != nil {
		return n, err
	}
	return n, syscall.ENOSPC
}

func (d *fullDisk) setRoom(n int) {
	d.mu.Lock()
	d.room = n
	d.mu.Unlock()
}

// historyTexts are the texts of the messages of the first request after
// a restart over dir, once chat sends text.
func historyAfterRestart(t *testing.T, dir string, chat int64, text string) []string {
	t.Helper()
	e := newEnv(t, echoText, envOptions{dataDir: dir})
	e.deliver(inChat(chat), text)
	e.chat.waitTexts(t, inChat(chat), 1)
	var texts []string
	for _, m := range e.model.Requests()[0].Messages {
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
		}
	}
	return texts
}

func echoText(_ context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{Text: "re: " + llmtest.LastUserText(req)}, nil
}

// A write cut short by a full disk (or a crash) leaves a partial line at
// the end of the transcript. The message is not saved and the user is told
// so; once there is room again the next message is saved on a line of its
// own — not glued to the partial one and lost at the next load.
func TestFullDiskLosesNothingOnceSpaceIsBack(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, echoText, envOptions{dataDir: dir})
	disk := &fullDisk{room: -1}
	e.manager.wrapTranscript = func(f transcriptFile) transcriptFile {
		disk.transcriptFile = f
		return disk
	}
	e.deliver(chat.In(50), "one")
	e.chat.waitTexts(t, chat.In(50), 1)

	disk.setRoom(10)
	e.deliver(chat.In(50), "two")
	got := e.chat.waitTexts(t, chat.In(50), 2)
	if !strings.HasPrefix(got[1], "Sorry, I could not save") {
		t.Errorf("reply on a full disk = %q", got[1])
	}

	disk.setRoom(-1)
	e.deliver(chat.In(50), "three")
	if got := e.chat.waitTexts(t, chat.In(50), 3); got[2] != "re: three" {
		t.Errorf("reply once there is room = %q", got[2])
	}
	e.close()

	want := []string{"one", "re: one", "three", "re: three", "four"}
	if got := historyAfterRestart(t, dir, 50, "four"); !slices.Equal(got, want) {
		t.Errorf("history after a restart = %q, want %q", got, want)
	}
}

// A transcript whose last line was torn by a crash is mended before the
// next message is appended: a torn line is cut off, a complete message
// that only lacks its newline is kept.
func TestTornLastLineIsMendedBeforeAppending(t *testing.T) {
	tests := []struct {
		name, tail string
		want       []string
	}{
		{"a torn line", `{"role":"assistant","parts":[{"kind":"te`, []string{"one", "two", "re: two", "three"}},
		{"a whole line without its newline", `{"role":"assistant","parts":[{"kind":"text","text":"whole"}]}`,
			[]string{"one", "whole", "two", "re: two", "three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logs := &recordHandler{level: slog.LevelWarn}
			e := newEnv(t, echoText, envOptions{dataDir: dir, logger: slog.New(logs)})
			path := writeTranscript(t, e, chat.In(51), `{"role":"user","parts":[{"kind":"text","text":"one"}]}`+"\n"+tt.tail)
			e.deliver(chat.In(51), "two")
			e.chat.waitTexts(t, chat.In(51), 1)
			e.close()
			if got := logs.Records(); len(got) != 1 || !strings.Contains(got[0], "last_line") {
				t.Errorf("want one warning for the file, naming the last line: %q", got)
			}
			if got := historyAfterRestart(t, dir, 51, "three"); !slices.Equal(got, tt.want) {
				t.Errorf("history after a restart = %q, want %q", got, tt.want)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"te{`) || !strings.HasSuffix(string(b), "\n") {
				t.Errorf("transcript:\n%s", b)
			}
		})
	}
}

// failingCut is a full disk on which cutting a file fails too, once.
type failingCut struct {
	*fullDisk
	failCut bool
}

func (f *failingCut) Truncate(size int64) error {
	if f.failCut {
		f.failCut = false
		return syscall.EIO
	}
	return f.fullDisk.Truncate(size)
}

// When the partial line a failed write left cannot be cut off at once, it
// is cut before the next append.
func TestAppendCutsAPartialLineLeftByAnEarlierFailure(t *testing.T) {
	ws := t.TempDir()
	var disk *failingCut
	tr, _, err := openTranscript(ws, func(f transcriptFile) transcriptFile {
		disk = &failingCut{fullDisk: &fullDisk{transcriptFile: f, room: 5}, failCut: true}
		return disk
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	msg := func(text string) *llm.Message {
		return &llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: text}}}
	}
	if err := tr.append(msg("lost")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	disk.setRoom(-1)
	if err := tr.append(msg("kept")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ws, transcriptName))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"role":"user","parts":[{"kind":"text","text":"kept"}]}` + "\n"; string(b) != want {
		t.Errorf("transcript = %q, want %q", b, want)
	}
}
