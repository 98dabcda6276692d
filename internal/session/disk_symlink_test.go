package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// A server of the chat plants symlinks in the workspace — one of its
// output folders to the chat's private folder, results/ to another chat's,
// in its other output folder a subfolder to the private folder, a log to
// the live transcript and a snapshot to another chat's file — and then
// fills its output folder over the budget. The prune removes the server's
// own oldest files and nothing through a symlink: the chat's transcript,
// saved browser state, profile and archived conversation, and the other
// chat's files, stay whole; /usage counts none of them.
func TestDiskBudgetFollowsNoSymlinkOut(t *testing.T) {
	const kb = 1 << 10
	dataDir := t.TempDir()
	dirs := chatdir.New(dataDir)
	ws, private, other := dirs.Workspace(chat.In(1)), dirs.Private(chat.In(1)), dirs.Workspace(chat.In(2))
	// What no prune may reach: sizes by path.
	keep := map[string]int{
		filepath.Join(private, "browser-state.json"):                        100 * kb,
		filepath.Join(private, "browser-profile", "Default", "Cookies"):     100 * kb,
		filepath.Join(private, archivePrefix+"20200101T000000Z"+archiveExt): 100 * kb,
		filepath.Join(other, ".out", "page-old.yml"):                        500 * kb,
		filepath.Join(other, "results", "old.txt"):                          500 * kb,
	}
	old := time.Now().Add(-24 * time.Hour)
	for path, size := range keep {
		writeSized(t, filepath.Dir(path), filepath.Base(path), size)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// Relative targets, as a server in the workspace would write them.
	plants := []struct{ path, target string }{
		{".link", "../../private/1"},
		{"results", "../2/results"},
		{".out/sub", "../../../private/1"},
		{".out/console-9.log", "../../../private/1/" + transcriptName},
		{".out/page-0.yml", "../../2/.out/page-old.yml"},
	}
	step := 0
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: llmtest.ResultText(res[0])}, nil
		}
		step++
		if step <= len(plants) {
			p := plants[step-1]
			return toolCall(fmt.Sprint("c", step), fakemcp.ToolSymlink, fmt.Sprintf(`{"path":%q,"target":%q}`, p.path, p.target)), nil
		}
		return toolCall(fmt.Sprint("c", step), fakemcp.ToolWriteFile,
			fmt.Sprintf(`{"path":".out/page-%d.yml","bytes":%d}`, step-len(plants), 300*kb)), nil
	}, envOptions{dataDir: dataDir, modes: []string{fakemcp.ModeDisk}, diskBudget: 1 << 20, diskCheckEvery: time.Hour,
		server: func(cfg *mcpconfig.ServerConfig) {
			cfg.Output = []mcpconfig.OutputDir{{Dir: ".out"}, {Dir: ".link"}}
		}})
	for i := range len(plants) + 4 {
		e.deliver(chat.In(1), "go")
		if got := e.chat.waitTexts(t, chat.In(1), i+1)[i]; !strings.HasPrefix(got, "linked ") && !strings.HasPrefix(got, "wrote ") {
			t.Fatalf("step %d: the tool said %q", i+1, got)
		}
	}
	// The watcher's checks of the chat's live server (its own ticks are an
	// hour apart: the test makes them).
	e.manager.mu.Lock()
	s := e.manager.sessions[chat.In(1)]
	e.manager.mu.Unlock()
	for range 3 {
		s.checkDisk(time.Now())
	}

	for path, size := range keep {
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(size) {
			t.Errorf("%s was reached through a symlink: %v, %v", path, fi, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(private, transcriptName)); err != nil || fi.Size() == 0 {
		t.Errorf("the transcript was reached through a symlink: %v, %v", fi, err)
	}
	// The archive (100 KB, never pruned: the newest) and four snapshots of
	// 300 KB: over 1 MB at the fourth, down to 768 KB by removing the
	// oldest two.
	if got, want := files(t, ws), []string{".out/page-3.yml", ".out/page-4.yml"}; !slices.Equal(got, want) {
		t.Errorf("the workspace holds %q, want %q", got, want)
	}
	text, err := e.manager.DiskUsage(context.Background(), chat.In(1))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Disk: 700 KB of this chat's 1.0 MB"; !strings.Contains(text, want) {
		t.Errorf("/usage's disk part lacks %q:\n%s", want, text)
	}
}
