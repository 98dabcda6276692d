package session

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
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

// transcript is an open transcript file. It is owned by one session
// goroutine.
type transcript struct {
	dir    string // the chat's private folder
	f      transcriptFile
	wrap   func(transcriptFile) transcriptFile // nil, or a test's fault injection
	logger *slog.Logger
	// size is the length of the file's complete lines: what it holds
	// after the last append that succeeded.
	size int64
	// torn is set when a failed append may have left part of a line
	// after size that could not be cut off yet.
	torn bool
}

// transcriptFile is what the transcript writes through: an *os.File, or
// in tests one that fails as a full disk does.
type transcriptFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// openTranscript opens (creating if needed) the transcript in dir, the
// chat's private folder (which exists), and returns the messages it
// holds, every one valid (see readTranscriptFrom).
// A torn last line (a crash mid-write) is skipped with a warning; so is
// any other undecodable line.
func openTranscript(dir string, wrap func(transcriptFile) transcriptFile, logger *slog.Logger) (*transcript, []llm.Message, error) {
	path := filepath.Join(dir, transcriptName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("transcript: %w", err)
	}
	// The tail first: what the reader then sees is what appends follow.
	size, tail, err := mendTail(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("transcript: %w", err)
	}
	msgs, report := decodeTranscript(io.NewSectionReader(f, 0, size))
	report.tail = tail
	report.log(logger, path)
	t := &transcript{dir: dir, wrap: wrap, logger: logger, size: size}
	t.setFile(f)
	return t, msgs, nil
}

// mkdir makes dir (0700) unless it exists; its parent must exist.
func mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// readTranscriptFrom decodes a transcript and logs, once for the file,
// what it skipped or repaired (see decodeTranscript).
func readTranscriptFrom(r io.Reader, path string, logger *slog.Logger) []llm.Message {
	msgs, report := decodeTranscript(r)
	report.log(logger, path)
	return msgs
}

// readReport is what decoding a transcript skipped or repaired.
type readReport struct {
	unreadable, long, mended int
	firstBad                 int    // line number, from 1
	tail                     string // what mendTail did, if anything
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

// decodeTranscript decodes a transcript. Lines that are not JSON, and
// lines over maxTranscriptLine (which are not read into memory), are
// skipped; messages that are JSON but that the agent cannot use are
// repaired or left out (see repairMessage); every message returned is
// valid. A read error ends the reading with what was read so far.
func decodeTranscript(r io.Reader) ([]llm.Message, readReport) {
	var (
		msgs []llm.Message
		rep  readReport
	)
	rep.err = eachLine(r, maxTranscriptLine, func(b []byte, size int64) {
		rep.lines++
		switch {
		case b == nil:
			rep.long++
		case len(bytes.TrimSpace(b)) == 0:
			return
		default:
			var m llm.Message
			if err := json.Unmarshal(b, &m); err != nil {
				rep.unreadable++
				break
			}
			m, changed, ok := repairMessage(m)
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
	return msgs, rep
}

// eachLine calls fn with every line of r, without its line end, and the
// line's size on disk. A line longer than limit is not kept in memory: fn
// gets nil and its size. Memory stays within limit whatever r holds.
func eachLine(r io.Reader, limit int, fn func(line []byte, size int64)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		buf  []byte
		size int64
		long bool
	)
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if !long {
			if len(buf)+len(chunk) > limit+1 { // +1: the '\n'
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		if size > 0 {
			if long {
				fn(nil, size)
			} else {
				fn(bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), size)
			}
		}
		if err != nil { // io.EOF
			return nil
		}
		buf, size, long = buf[:0], 0, false
	}
}

// append stores m: image data goes to files (m is changed to reference
// them and drop the bytes), then one line is written and synced.
func (t *transcript) append(m *llm.Message) error {
	for i := range m.Parts {
		if err := t.storeImages(&m.Parts[i]); err != nil {
			return err
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	b = append(b, '\n')
	if err := t.writeLine(b); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	return nil
}

// writeLine appends b (one line) and syncs it, or leaves the file as it
// was: a write cut short (a full disk) or a failed sync is cut off again,
// so the next line never follows a partial one. When even that fails the
// cut is tried again before the next write.
func (t *transcript) writeLine(b []byte) error {
	if t.torn {
		if err := t.f.Truncate(t.size); err != nil {
			return fmt.Errorf("cut off a partial line: %w", err)
		}
		t.torn = false
	}
	_, err := t.f.Write(b)
	if err == nil {
		err = t.f.Sync()
	}
	if err != nil {
		if terr := t.f.Truncate(t.size); terr != nil {
			t.torn = true
		}
		return err
	}
	t.size += int64(len(b))
	return nil
}

// mendTail makes sure f ends with a complete line, and returns its size
// and what it did ("" when nothing). A last line without its newline (a
// crash or a full disk mid-write) is cut off, or, when it is a whole
// message that only lacks the newline, given one. Otherwise the next
// append would be glued to it and both would be lost at the next load.
func mendTail(f *os.File) (size int64, did string, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	size = fi.Size()
	if size == 0 {
		return 0, "", nil
	}
	end := make([]byte, 1)
	if _, err := f.ReadAt(end, size-1); err != nil {
		return 0, "", err
	}
	if end[0] == '\n' {
		return size, "", nil
	}
	start, err := lineStart(f, size)
	if err != nil {
		return 0, "", err
	}
	if n := size - start; n <= maxTranscriptLine {
		tail := make([]byte, n)
		if _, err := f.ReadAt(tail, start); err != nil {
			return 0, "", err
		}
		var m llm.Message
		if json.Unmarshal(tail, &m) == nil {
			if _, err := f.Write([]byte("\n")); err != nil {
				return 0, "", err
			}
			return size + 1, "had no line end: added one", nil
		}
	}
	if err := f.Truncate(start); err != nil {
		return 0, "", err
	}
	return start, fmt.Sprintf("torn (%s): cut off", byteSize(int(size-start))), nil
}

// lineStart returns the offset just after the last '\n' before size (0
// when there is none), reading backwards.
func lineStart(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := min(int64(len(buf)), end)
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
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
	if _, err := os.Stat(path); err == nil {
		return name, nil
	}
	if err := mkdir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("transcript image: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, img.Data, 0o600); err != nil {
		_ = os.Remove(tmp) // a full disk leaves part of it
		return "", fmt.Errorf("transcript image: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
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
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	t.size, t.torn = 0, false
	t.setFile(f)
	return nil
}

func (t *transcript) setFile(f *os.File) {
	t.f = f
	if t.wrap != nil {
		t.f = t.wrap(f)
	}
}

func (t *transcript) close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
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
