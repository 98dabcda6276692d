package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// The transcript is a chat's conversation on disk: one JSON line per
// message in the chat's private folder, appended and synced as each message
// is added, so a bot killed at any moment loses at most the message being
// written. Images live beside it as files named by their digest, not as
// base64 in the log.

const (
	transcriptName = "transcript.jsonl"
	imagesDir      = "images"
	// An archived transcript (/new) is transcript-<UTC time>.jsonl.
	archivePrefix, archiveExt = "transcript-", ".jsonl"
)

// isArchive matches the archived transcripts, not the live one.
func isArchive(name string) bool {
	return strings.HasPrefix(name, archivePrefix) && strings.HasSuffix(name, archiveExt)
}

// transcript is an open transcript file: a store journal. It is owned by
// one session goroutine.
type transcript struct {
	dir    string // the chat's private folder
	j      *store.Journal
	wrap   func(transcriptFile) transcriptFile // nil, or a test's fault injection
	logger *slog.Logger
	// summary is the conversation's head as read (transcript_summary.go).
	summary agent.Summary
}

// transcriptFile is what the transcript writes through: an *os.File, or
// in tests one that fails as a full disk does.
type transcriptFile = store.File

// openTranscript opens (creating if needed) the transcript in dir, the
// chat's private folder (which exists), and returns the messages it
// holds, every one valid (see decodeLines).
// A torn last line (a crash mid-write) is cut off, and a whole message
// that only lacks its newline given one, with a warning; any other
// undecodable line is skipped with a warning.
func openTranscript(dir string, wrap func(transcriptFile) transcriptFile, logger *slog.Logger) (*transcript, []llm.Message, error) {
	path := filepath.Join(dir, transcriptName)
	// The tail first: what the reader then sees is what appends follow.
	j, tail, err := store.OpenJournal(path, journalOptions(wrap))
	if err != nil {
		return nil, nil, fmt.Errorf("transcript: %w", err)
	}
	msgs, summary, report := decodeRecords(j.Read)
	switch {
	case tail.Mended:
		report.tail = "had no line end: added one"
	case tail.Cut > 0:
		report.tail = fmt.Sprintf("torn (%s): cut off", chat.ByteSize(int(tail.Cut)))
	}
	report.log(logger, path)
	return &transcript{dir: dir, j: j, wrap: wrap, logger: logger, summary: summary}, msgs, nil
}

// journalOptions are the transcript's: lines up to maxTranscriptLine, and
// a last line that is a whole message kept.
func journalOptions(wrap func(transcriptFile) transcriptFile) store.JournalOptions {
	return store.JournalOptions{MaxLine: maxTranscriptLine, Wrap: wrap, Whole: func(line []byte) bool {
		var m llm.Message
		return json.Unmarshal(line, &m) == nil
	}}
}

// mkdir makes dir (0700) unless it exists; its parent must exist.
func mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// readReport is what decoding a transcript skipped or repaired.
type readReport struct {
	unreadable, long, mended int
	firstBad                 int    // line number, from 1
	tail                     string // what opening did to a torn last line, if anything
	err                      error  // the read error that ended it
	lines                    int
}

// log writes the report as one warning, when there is anything to say.
func (r readReport) log(logger *slog.Logger, path string) {
	if r.unreadable == 0 && r.long == 0 && r.mended == 0 && r.tail == "" && r.err == nil {
		return
	}
	attrs := []any{"path", path, "unreadable_lines", r.unreadable, "long_lines", r.long,
		"repaired_messages", r.mended, "first_line", r.firstBad, "max_line_bytes", maxTranscriptLine}
	if r.tail != "" {
		attrs = append(attrs, "last_line", r.tail)
	}
	if r.err != nil {
		attrs = append(attrs, "stopped_at_line", r.lines, "err", r.err)
	}
	logger.Warn("transcript: left out or repaired what the conversation cannot use", attrs...)
}

// decodeLines decodes the lines each hands over (decodeRecords), without
// the summary.
func decodeLines(each func(fn func(line []byte, size int64)) error) ([]llm.Message, readReport) {
	msgs, _, rep := decodeRecords(each)
	return msgs, rep
}

// decodeRecords decodes the lines each hands over: the messages, and the
// last summary record that fits them (see summaryAt). Lines that are not
// JSON, and lines over maxTranscriptLine (which are not read into memory),
// are skipped; messages that are JSON but that the agent cannot use are
// repaired or left out (see repairMessage); every message returned is
// valid. A read error ends the reading with what was read so far.
func decodeRecords(each func(fn func(line []byte, size int64)) error) ([]llm.Message, agent.Summary, readReport) {
	var (
		msgs    []llm.Message
		summary *agent.Summary
		rep     readReport
	)
	rep.err = each(func(b []byte, size int64) {
		rep.lines++
		switch {
		case b == nil:
			rep.long++
		case len(bytes.TrimSpace(b)) == 0:
			return
		default:
			var line transcriptLine
			if err := json.Unmarshal(b, &line); err != nil {
				rep.unreadable++
				break
			}
			if line.Summary != nil {
				summary = line.Summary
				return
			}
			m, changed, ok := repairMessage(line.Message)
			if ok {
				msgs = append(msgs, m)
			}
			if !changed {
				return
			}
			rep.mended++
		}
		if rep.firstBad == 0 {
			rep.firstBad = rep.lines
		}
	})
	msgs, orphans := repairHistory(msgs)
	rep.mended += orphans
	sum, ok := summaryAt(summary, msgs)
	if !ok {
		rep.mended++
	}
	return msgs, sum, rep
}

// append stores m: image data goes to files (m is changed to reference
// them and drop the bytes), then one line is written and synced.
func (t *transcript) append(m *llm.Message) error {
	for i := range m.Parts {
		if err := t.storeImages(&m.Parts[i]); err != nil {
			return err
		}
	}
	if t.j == nil { // a scheduled run's: kept in memory only
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	b = append(b, '\n')
	if err := t.j.Append(b); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	return nil
}

func (t *transcript) storeImages(p *llm.Part) error {
	switch {
	case p.Image != nil && len(p.Image.Data) > 0:
		name, err := t.writeImage(p.Image)
		if err != nil {
			return err
		}
		p.Image.Path = name
		p.Image.Data = nil
	case p.ToolResult != nil:
		for i := range p.ToolResult.Content {
			if err := t.storeImages(&p.ToolResult.Content[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeImage stores an image under images/<sha256>.<ext> (once) and returns
// its path relative to the state dir.
func (t *transcript) writeImage(img *llm.Image) (string, error) {
	sum := sha256.Sum256(img.Data)
	name := filepath.Join(imagesDir, hex.EncodeToString(sum[:16])+imageExt(img.MIMEType))
	path := filepath.Join(t.dir, name)
	// Stored once: used again, it is as new as this use (a prune takes the
	// oldest first), and written again when a prune took it meanwhile.
	if now := time.Now(); os.Chtimes(path, now, now) == nil {
		return name, nil
	}
	if err := mkdir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("transcript image: %w", err)
	}
	if err := store.WriteFile(path, img.Data, nil); err != nil {
		return "", fmt.Errorf("transcript image: %w", err)
	}
	return name, nil
}

// loadImage reads an image stored by writeImage.
func (t *transcript) loadImage(img *llm.Image) ([]byte, error) {
	if len(img.Data) > 0 || img.Path == "" {
		return img.Data, nil
	}
	if filepath.IsAbs(img.Path) || strings.Contains(img.Path, "..") {
		return nil, fmt.Errorf("transcript image path %q is not inside the state dir", img.Path)
	}
	return os.ReadFile(filepath.Join(t.dir, img.Path))
}

// archive closes the transcript and moves it aside (/new): the next
// conversation starts empty, the old one stays on disk.
func (t *transcript) archive(now time.Time) error {
	if err := t.close(); err != nil {
		return err
	}
	path := filepath.Join(t.dir, transcriptName)
	dst := filepath.Join(t.dir, archivePrefix+now.UTC().Format("20060102T150405.000000000Z")+archiveExt)
	if err := os.Rename(path, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive transcript: %w", err)
	}
	j, _, err := store.OpenJournal(path, journalOptions(t.wrap))
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	t.j = j
	return nil
}

func (t *transcript) close() error {
	if t.j == nil {
		return nil
	}
	err := t.j.Close()
	t.j = nil
	return err
}

func imageExt(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".bin"
}
