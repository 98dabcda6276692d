package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// logRecorder is a slog handler that keeps the messages of the records.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	return nil
}

// count is how many messages contain s.
func (r *logRecorder) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// withOutput gives the fake server an output folder (.out/) and the disk
// tools, as the browser preset gives @playwright/mcp its own.
func withOutput(cfg *mcpconfig.ServerConfig) {
	cfg.Output = []mcpconfig.OutputDir{{Dir: ".out"}}
	cfg.ProcessNoun = "" // "fake process"
}

const floodReply = "I stopped this chat's fake process: it kept writing its log to disk"

// A server log that grows with no call in flight: emptied at the first
// check, and at the next one the chat's process of that server is stopped
// and the chat told; its next call starts a fresh one.
func TestRunawayLogStopsTheChatsProcess(t *testing.T) {
	rec := &logRecorder{}
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "the tool said: " + llmtest.ResultText(res[0])}, nil
		}
		if llmtest.LastUserText(req) == "flood" {
			return toolCall("c1", fakemcp.ToolWriteLog, `{"path":".out/console-1.log"}`), nil
		}
		return toolCall("c2", fakemcp.ToolEcho, `{"text":"again"}`), nil
	}, envOptions{modes: []string{fakemcp.ModeDisk}, server: withOutput, diskCheckEvery: 500 * time.Millisecond,
		logger: slog.New(rec)})
	e.deliver(chat.In(1), "flood")
	e.chat.waitTexts(t, chat.In(1), 1)
	pid := e.mcpPID(chat.In(1))
	texts := e.chat.waitTexts(t, chat.In(1), 2)
	if !strings.HasPrefix(texts[1], floodReply) {
		t.Fatalf("the chat got %q, want %q…", texts[1], floodReply)
	}
	if n := rec.count("emptied"); n < 1 {
		t.Errorf("the log was not emptied before the stop")
	}
	testkit.WaitFor(t, "the fake's process to end", 30*time.Second, func() bool { return pidGone(pid) })
	log := filepath.Join(e.manager.Workspace(chat.In(1)), ".out", "console-1.log")
	if fi, err := os.Stat(log); err != nil || fi.Size() > 8*runawayMin {
		t.Errorf("the log holds %v (%v), want it emptied on the way", fi.Size(), err)
	}
	ms, _ := e.manager.MCP(chat.In(1))
	if st, _ := ms.(*mcpclient.Session).Status("fake"); st.State != mcpclient.StateNotStarted {
		t.Errorf("the fake is %s for the chat, want not started", st.State)
	}
	e.deliver(chat.In(1), "again")
	if got := e.chat.waitTexts(t, chat.In(1), 3)[2]; got != "the tool said: again" {
		t.Errorf("the next call: %q", got)
	}
}

// While the chat's turn runs (the model thinks between two calls), the
// runaway log is only emptied, at every check: the turn holds its
// process. Once the turn ends, the process is stopped.
func TestRunawayLogDuringATurnIsOnlyEmptied(t *testing.T) {
	rec := &logRecorder{}
	thinking := make(chan struct{})
	release := make(chan struct{})
	e := newEnv(t, func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			close(thinking)
			select {
			case <-release:
			case <-ctx.Done():
				return llm.Response{}, ctx.Err()
			}
			return llm.Response{Text: "done"}, nil
		}
		return toolCall("c1", fakemcp.ToolWriteLog, `{"path":".out/console-1.log"}`), nil
	}, envOptions{modes: []string{fakemcp.ModeDisk}, server: withOutput, diskCheckEvery: 500 * time.Millisecond,
		logger: slog.New(rec)})
	e.deliver(chat.In(1), "flood")
	<-thinking
	pid := e.mcpPID(chat.In(1))
	testkit.WaitFor(t, "the log to be emptied three times", 30*time.Second, func() bool { return rec.count("emptied") >= 3 })
	if pidGone(pid) || len(e.chat.Texts(chat.In(1))) > 0 {
		t.Fatalf("the process was stopped during the turn (alive: %v; the chat got %q)", !pidGone(pid), e.chat.Texts(chat.In(1)))
	}
	close(release)
	texts := e.chat.waitTexts(t, chat.In(1), 2)
	if texts[0] != "done" || !strings.HasPrefix(texts[1], floodReply) {
		t.Errorf("the chat got %q, want the answer, then the stop", texts)
	}
	testkit.WaitFor(t, "the fake's process to end", 30*time.Second, func() bool { return pidGone(pid) })
}

// The files a server saves in its output folder and the results saved
// over the cap are pruned oldest first to the budget, after the step that
// made them; the user's uploads, the files saved by name and the live
// transcript are not.
func TestDiskBudgetPrunesWhatIsGenerated(t *testing.T) {
	const kb = 1 << 10
	step := 0
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "ok"}, nil
		}
		step++
		return toolCall(fmt.Sprint("c", step), fakemcp.ToolWriteFile,
			fmt.Sprintf(`{"path":".out/page-%d.yml","bytes":%d}`, step, 300*kb)), nil
	}, envOptions{modes: []string{fakemcp.ModeDisk}, server: withOutput, diskBudget: 1 << 20})
	ws := e.manager.Workspace(chat.In(1))
	for name, size := range map[string]int{"uploads/photo.jpg": 2 << 20, "browser/shot.png": 2 << 20, "results/old.txt": 200 * kb} {
		writeSized(t, ws, name, size)
	}
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(filepath.Join(ws, "results", "old.txt"), old, old)
	for i := range 4 {
		e.deliver(chat.In(1), "write")
		e.chat.waitTexts(t, chat.In(1), i+1)
	}
	// 200 KB of results, then snapshots of 300 KB: over 1 MB at the
	// third; the oldest go until 768 KB are left (two snapshots), and the
	// fourth makes 900 KB.
	got := files(t, ws)
	want := []string{".out/page-2.yml", ".out/page-3.yml", ".out/page-4.yml", "browser/shot.png", "uploads/photo.jpg"}
	if !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.manager.Private(chat.In(1)), transcriptName)); err != nil {
		t.Errorf("the transcript: %v", err)
	}
	text, err := e.manager.DiskUsage(context.Background(), chat.In(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Disk: 900 KB of this chat's 1.0 MB", "• .out/ (fake's own files): 900 KB in 3 files",
		"the chat's own files (uploads, files saved by name) 4.0 MB"} {
		if !strings.Contains(text, want) {
			t.Errorf("/usage's disk part lacks %q:\n%s", want, text)
		}
	}
}

// A chat's folders over the budget from before (an earlier version kept
// everything) are pruned when its conversation is read.
func TestDiskBudgetPrunesAtOpen(t *testing.T) {
	dataDir := t.TempDir()
	ws := filepath.Join(dataDir, "chats", "1")
	for i := range 10 {
		writeSized(t, ws, fmt.Sprintf(".out/page-%d.yml", i), 500<<10)
		mod := time.Now().Add(time.Duration(i-20) * time.Minute)
		_ = os.Chtimes(filepath.Join(ws, ".out", fmt.Sprintf("page-%d.yml", i)), mod, mod)
	}
	e := newEnv(t, func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "hi"}, nil },
		envOptions{dataDir: dataDir, server: withOutput, diskBudget: 2 << 20})
	e.deliver(chat.In(1), "hello")
	e.chat.waitTexts(t, chat.In(1), 1)
	got := files(t, ws)
	want := []string{".out/page-7.yml", ".out/page-8.yml", ".out/page-9.yml"}
	if !slices.Equal(got, want) {
		t.Errorf("left %q, want the newest within 1.5 MB: %q", got, want)
	}
}

// The images of the live conversation are the conversation's: neither
// counted nor pruned; after /new they belong to a conversation left, and
// count.
func TestDiskBudgetImagesOfTheConversation(t *testing.T) {
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "seen"}, nil
		}
		return toolCall("c1", fakemcp.ToolImage, `{}`), nil
	}, envOptions{})
	e.deliver(chat.In(1), "show me")
	e.chat.waitTexts(t, chat.In(1), 1)
	images, _ := filepath.Glob(filepath.Join(e.manager.Private(chat.In(1)), imagesDir, "*"))
	if len(images) != 1 {
		t.Fatalf("images: %q", images)
	}
	text, _ := e.manager.DiskUsage(context.Background(), chat.In(1))
	if strings.Contains(text, "conversations left with /new") {
		t.Errorf("the live conversation's image counts:\n%s", text)
	}
	if err := e.manager.Reset(context.Background(), chat.In(1)); err != nil {
		t.Fatal(err)
	}
	text, _ = e.manager.DiskUsage(context.Background(), chat.In(1))
	if !strings.Contains(text, "• conversations left with /new: ") || !strings.Contains(text, "in 2 files") {
		t.Errorf("after /new the archive and its image do not count:\n%s", text)
	}
}

// Right after a restart, before the chat's first message, the live
// conversation's images are still the conversation's: /usage reads the
// conversation first (they were counted as a conversation left with /new).
func TestDiskUsageAfterARestartKnowsTheConversation(t *testing.T) {
	dataDir := t.TempDir()
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "seen"}, nil
		}
		return toolCall("c1", fakemcp.ToolImage, `{}`), nil
	}
	e := newEnv(t, answer, envOptions{dataDir: dataDir})
	e.deliver(chat.In(1), "show me")
	e.chat.waitTexts(t, chat.In(1), 1)
	e.close()

	e = newEnv(t, answer, envOptions{dataDir: dataDir})
	text, err := e.manager.DiskUsage(context.Background(), chat.In(1))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "conversations left with /new") || !strings.Contains(text, "none yet") {
		t.Errorf("after a restart the live conversation's image counts:\n%s", text)
	}
}

func writeSized(t *testing.T, dir, name string, size int) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
}

// files lists the files of the workspace ws, relative and sorted.
func files(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(ws, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}
