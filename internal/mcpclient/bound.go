package mcpclient

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
)

// DefaultMaxResultTokens caps what the model gets of one tool result, linked
// files inlined included (MCP_MAX_RESULT_TOKENS).
const DefaultMaxResultTokens = 25_000

// ResultsDir is the workspace folder results over the cap are saved in,
// whole, for the model (and its tools) to read on (chatdir.ResultsDir).
const ResultsDir = chatdir.ResultsDir

// maxSavedResults is how many saved results a chat keeps: the oldest go.
const maxSavedResults = 100

// noteTokens is room kept for the note under the cap.
const noteTokens = 200

// bound keeps res within the cap of tokens: past it the whole text is saved
// in the chat's workspace under results/, and the model gets its head, the
// total size and the path. Images stay as they are (they have a cap of
// their own). Nothing changes for a result within the cap, and one that
// needs no counting (fewer bytes than the cap has tokens: a token is at
// least a byte) costs no tokenizer.
func (c *connection) bound(res *Result, tool Tool) {
	limit := c.deps.maxResultTokens
	size := 0
	for _, p := range res.Content {
		if p.Kind == chat.TextPart {
			size += len(p.Text) + 1
		}
	}
	if size <= limit {
		return
	}
	text := res.Text()
	count := c.deps.countTokens
	total := count(text)
	if total <= limit {
		return
	}
	head := headWithin(text, limit-noteTokens, count)
	saved, err := saveResult(c.workspace, tool.Name, text)
	var where string
	switch {
	case err != nil:
		c.deps.sp.logger.Warn("could not save a tool result over the cap", "server", c.cfg.Name, "tool", tool.Name, "err", err)
		where = "It could not be saved in the workspace, so the rest is lost: ask the tool for less."
	default:
		where = fmt.Sprintf("The whole result is saved in the workspace at %s (%d lines): read on from line %d with the read tool, "+
			"or ask the tool for less.", saved, countLines(text), countLines(head)+1)
	}
	note := fmt.Sprintf("[This result is %d tokens (%s), over the limit of %d tokens for one tool result: above are its first %d lines. %s]",
		total, chat.ByteSize(len(text)), limit, countLines(head), where)
	out := make([]chat.Part, 0, len(res.Content)+2)
	out = append(out, textContent(head))
	for _, p := range res.Content {
		if p.Kind != chat.TextPart {
			out = append(out, p)
		}
	}
	res.Content = append(out, textContent(note))
	res.Truncated = true
}

// headWithin is the longest head of text within limit tokens, cut on a
// line boundary where one falls in its second half, always on a character
// boundary.
func headWithin(text string, limit int, count func(string) int) string {
	cut := min(len(text), limit*4) // about 4 bytes a token in English, JSON and HTML
	for range 6 {
		n := count(text[:cut])
		if n <= limit {
			break
		}
		cut = int(float64(cut) * float64(limit) / float64(n) * 0.97)
	}
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(text[:cut], '\n'); i >= cut/2 {
		cut = i
	}
	return text[:cut]
}

// saveResult writes text to a new file of the workspace's results folder
// and returns its workspace-relative path. The oldest saved results are
// removed past maxSavedResults. Every step goes through an os.Root of the
// workspace: the chat's servers write there too, and a results folder one
// of them made a symlink to another chat's workspace (or anywhere out of
// this one) is refused, never written into nor pruned.
func saveResult(workspace, tool, text string) (string, error) {
	ws, err := os.OpenRoot(workspace)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	if err := ws.Mkdir(ResultsDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	dir, err := ws.OpenRoot(ResultsDir)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	name, err := createResult(dir, time.Now().UTC().Format("20060102T150405.000")+"-"+SanitizeToolName("", tool), text)
	if err != nil {
		return "", err
	}
	pruneResults(dir)
	return ResultsDir + "/" + name, nil
}

// createResult writes text to a new file of dir named stem.txt, or
// stem-2.txt … when a result of the same millisecond took that name.
func createResult(dir *os.Root, stem, text string) (string, error) {
	for n := 1; ; n++ {
		name := stem + ".txt"
		if n > 1 {
			name = stem + "-" + strconv.Itoa(n) + ".txt"
		}
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return name, err
	}
}

// pruneResults removes the oldest saved results of dir past
// maxSavedResults (their names start with the time they were saved).
func pruneResults(dir *os.Root) {
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil || len(entries) <= maxSavedResults {
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".txt") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // the time first: the oldest first
	for _, n := range names[:max(0, len(names)-maxSavedResults)] {
		_ = dir.Remove(n)
	}
}

// estimateTokens is the count without a tokenizer: about four bytes a
// token.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }
