package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/disk"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A chat's disk budget. What the bot and its servers generate in a chat's
// two folders (chatdir: the workspace and, beside it, the private folder)
// counts against it, and is pruned oldest first when it is full:
//   - in the workspace, the servers' own files (ServerConfig.Output: the
//     browser's page snapshots, console and network logs, downloads,
//     screenshots saved without a name, all under .playwright-mcp/), and
//     results/: tool results too big for one step, saved whole;
//   - in the private folder, the conversations left with /new (archived
//     transcripts: the newest is counted, never pruned), and the images
//     only they show.
//
// What is never counted nor removed: the user's uploads and every other
// file of the workspace (a screenshot the model saved under a name it
// chose, browser/shot.png, is one), the live conversation and its images,
// and the rest of the bot's state of the chat (the saved browser state, a
// per-chat browser profile, which holds its logins). /usage shows them
// apart.

// Defaults for the disk budget (Options.DiskBudget, DiskCheckEvery).
const (
	// DefaultDiskBudget is 256 MiB a chat: fifty chats that fill theirs
	// take 12.5 GiB, which a 25 GB VPS disk holds beside the image; a
	// heavily browsing chat of the soak test wrote about 6 MB an hour of
	// snapshots, so the budget keeps days of them.
	DefaultDiskBudget = 256 << 20
	// DefaultDiskCheckEvery is how often the chats with a live server are
	// measured for a runaway writer: a measure that finds nothing new
	// costs tens of microseconds (BenchmarkMeasure), and a writer is cut
	// after about two intervals of its output.
	DefaultDiskCheckEvery = 2 * time.Second
)

func isLog(name string) bool { return strings.HasSuffix(name, ".log") }

// diskSources are the folders of generated files of the chat whose
// workspace and private folder are given (chatdir's, side by side): in
// the workspace, what its servers write there of their own and the results
// saved over the cap; in the private folder, the archived conversations
// and their images. Each source is taken from its chat folder down, never
// through a symlink (package disk): a server may plant symlinks in the
// workspace, and no prune follows one to the private folder, to another
// chat or anywhere else.
func (m *Manager) diskSources(workspace, private string) []disk.Source {
	var out []disk.Source
	for _, cfg := range m.o.MCP.Servers() {
		if !cfg.Enabled {
			continue
		}
		for _, o := range cfg.Output {
			out = append(out, disk.Source{Kind: strings.TrimSuffix(o.Dir, "/") + "/ (" + cfg.Name + "'s own files)",
				Base: workspace, Dir: filepath.Join(workspace, filepath.FromSlash(o.Dir)), Deep: o.Match == nil, Match: o.Match,
				Log: isLog, Writer: cfg.Name})
		}
	}
	return append(out,
		disk.Source{Kind: chatdir.ResultsDir + "/ (tool results too big for one step)", Base: workspace,
			Dir: filepath.Join(workspace, chatdir.ResultsDir), Match: func(name string) bool { return strings.HasSuffix(name, ".txt") }},
		disk.Source{Kind: "conversations left with /new", Base: private, Dir: private, Match: isArchive, Keep: 1},
		disk.Source{Kind: "conversations left with /new", Base: private, Dir: filepath.Join(private, imagesDir)},
	)
}

// newDisk is the chat's budget; no I/O.
func (m *Manager) newDisk(workspace, private string) *disk.Tracker {
	return disk.New(disk.Options{Sources: m.diskSources(workspace, private), Budget: m.o.DiskBudget})
}

// pinImages tells the budget which images the live conversation shows:
// they are the conversation's, neither counted nor pruned. Called from the
// chat's goroutine with the history loaded.
func (s *session) pinImages() {
	var paths []string
	var walk func(parts []llm.Part)
	walk = func(parts []llm.Part) {
		for _, p := range parts {
			if p.Image != nil && p.Image.Path != "" {
				paths = append(paths, filepath.Join(s.private, filepath.FromSlash(p.Image.Path)))
			}
			if p.ToolResult != nil {
				walk(p.ToolResult.Content)
			}
		}
	}
	for _, msg := range s.history {
		walk(msg.Parts)
	}
	for _, msg := range s.parked { // the conversation, while a scheduled run has the history
		walk(msg.Parts)
	}
	s.disk.Pin(paths)
	s.diskReady.Store(true)
}

// enforceDisk prunes the chat's generated files to its budget. Called
// from the chat's goroutine with the history loaded (what it shows is
// pinned first).
func (s *session) enforceDisk() {
	s.pinImages()
	s.logPrune(s.disk.Enforce())
}

func (s *session) logPrune(res disk.PruneResult) {
	if res.Files == 0 {
		return
	}
	s.m.logger.Info("the chat's generated files were over its disk budget: the oldest were removed", "chat", s.id,
		"files", res.Files, "bytes", res.Bytes, "left_bytes", res.Usage.Bytes, "left_files", res.Usage.Files, "budget_bytes", s.disk.Budget())
}

// DiskUsage is /usage's part on disk for chat: its generated files against
// its budget, by kind, and what is not counted. A chat whose conversation
// has not been read since the start reads it first (on its goroutine), so
// that the images it shows are not counted as a conversation left; until
// ctx ends.
func (m *Manager) DiskUsage(ctx context.Context, place chat.Place) (string, error) {
	s, err := m.get(place)
	if err != nil {
		return "", err
	}
	if !s.diskReady.Load() {
		if err := s.openFirst(ctx); err != nil {
			return "", err
		}
	}
	u := s.disk.Measure()
	var b strings.Builder
	fmt.Fprintf(&b, "Disk: %s of this chat's %s for files the bot and its tools make (the oldest go first when it is full)",
		byteSize64(u.Bytes), byteSize64(s.disk.Budget()))
	if u.Files == 0 {
		b.WriteString(": none yet.")
	} else {
		b.WriteString(":")
		for _, k := range u.ByKind {
			if k.Files > 0 {
				fmt.Fprintf(&b, "\n• %s: %s in %s", k.Kind, byteSize64(k.Bytes), plural(k.Files, "file"))
			}
		}
	}
	const bound = 20_000
	own := disk.Size(s.workspace, s.disk.Covers, bound)
	state := disk.Size(s.private, s.disk.Covers, bound)
	state.Bytes += u.Pinned // the live conversation's images
	fmt.Fprintf(&b, "\nNot counted, never removed: the chat's own files (uploads, files saved by name) %s; "+
		"this conversation and the bot's state of the chat %s.", treeText(own), treeText(state))
	return b.String(), nil
}

func treeText(t disk.Tree) string {
	if t.Partial {
		return "over " + byteSize64(t.Bytes)
	}
	return byteSize64(t.Bytes)
}

func byteSize64(n int64) string { return chat.ByteSize(int(n)) }
