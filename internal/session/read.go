package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/preset"
)

// The built-in read tool pages through a text file of the workspace: a
// tool result saved under results/ because it was over the cap, a page
// snapshot or a console log the browser wrote, anything the tools saved.
// It opens the file by the rules send does (workspacefile.go) and refuses
// binary files. One call returns at most readMaxLines lines and
// readMaxBytes bytes (about 8,000 tokens); a line longer than readMaxLine
// is cut to its head. The result says which lines it holds, of how many,
// and the offset to read on from.

// ReadToolName is the built-in read tool's name; MCP tools may not take it.
const ReadToolName = "read"

const (
	readMaxLines = 2000
	readMaxBytes = 32 << 10
	readMaxLine  = 8 << 10
	// readCountLimit bounds the scan that counts a file's lines.
	readCountLimit = 64 << 20
	// sniffBytes is how much of a file decides whether it is text.
	sniffBytes = 8 << 10
)

// The browser's files (page snapshots, console logs) are the preset's to
// name.
const readDescription = "Read a text file of the workspace, a page at a time: tool results saved under results/, " +
	preset.ReadableFiles + ", files the tools wrote. " +
	"Gives up to 2000 lines (32 KB); offset is the first line (from 1), limit the number of lines."

var readSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"e.g. results/….txt or ` + preset.ReadableExample + `"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// readArguments decodes read's arguments, or returns the error text for
// the model. Numbers may come as strings ("40") or floats (40.0).
func readArguments(raw json.RawMessage) (readArgs, string) {
	obj, problem := callArguments(ReadToolName, raw)
	if problem != "" {
		return readArgs{}, problem
	}
	var a struct {
		Path   *string         `json:"path"`
		Offset json.RawMessage `json:"offset"`
		Limit  json.RawMessage `json:"limit"`
	}
	usage := `send {"path": "<workspace-relative path>", "offset": <first line>, "limit": <lines>}`
	if err := json.Unmarshal(obj, &a); err != nil || a.Path == nil {
		why := "path is required"
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			why = fmt.Sprintf("%q must be a string, not %s", typ.Field, jsonTypeName(typ.Value))
		}
		return readArgs{}, fmt.Sprintf("invalid arguments for %s: %s — %s", ReadToolName, why, usage)
	}
	args := readArgs{Path: *a.Path}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *int
	}{{"offset", a.Offset, &args.Offset}, {"limit", a.Limit, &args.Limit}} {
		n, ok := wholeNumber(f.raw)
		if !ok {
			return readArgs{}, fmt.Sprintf("invalid arguments for %s: %s must be a whole number — %s", ReadToolName, f.name, usage)
		}
		*f.dst = n
	}
	return args, ""
}

// wholeNumber reads a JSON number or a string holding one; absent or null
// is 0.
func wholeNumber(raw json.RawMessage) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(strings.TrimSpace(s))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// readWorkspaceFile is the read tool in workspace.
func readWorkspaceFile(open beneathFunc, workspace string, args readArgs) (string, error) {
	path := args.Path
	if file, line, ok := preset.CutLineAnchor(path); ok { // a console entry: its log from its line
		if args.Offset == 0 {
			args.Offset = line
		}
		path = file
	}
	f, fi, err := openWorkspaceFile(open, workspace, path, ReadToolName)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.Size() == 0 {
		return fmt.Sprintf("%s is empty.", path), nil
	}
	head := make([]byte, min(fi.Size(), sniffBytes))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("reading %s: %v", path, err)
	}
	if binary(head[:n], int64(n) < fi.Size()) {
		return "", fmt.Errorf("%s is a binary file (%s, %s), not text: read takes text files; send can deliver this one to the user",
			path, http.DetectContentType(head[:n]), chat.ByteSize(int(fi.Size())))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("reading %s: %v", path, err)
	}
	return pageLines(bufio.NewReaderSize(f, 64<<10), path, args.Offset, args.Limit)
}

// binary reports whether head (the start of a file; more follows when
// cut) looks binary: a NUL byte, or bytes that are not UTF-8.
func binary(head []byte, cut bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if cut { // the cut may split a character
		for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// pageLines writes lines offset… of r (offset from 1) within the limits,
// with a header saying which, and a footer saying where to read on.
func pageLines(r *bufio.Reader, path string, offset, limit int) (string, error) {
	offset = max(offset, 1)
	if limit <= 0 || limit > readMaxLines {
		limit = readMaxLines
	}
	var (
		out         strings.Builder
		line        int // lines read so far
		first, last int // the lines written
		cutLines    []int
		scanned     int64
		stopped     bool // no more lines are written
		full        = true
	)
	for {
		text, cut, n, err := readLine(r)
		if n == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return "", fmt.Errorf("reading %s: %v", path, err)
		}
		line++
		scanned += int64(n)
		if line >= offset && !stopped {
			// A line is at most readMaxLine, so the first one always fits.
			if line-offset < limit && out.Len()+len(text)+1 <= readMaxBytes {
				if first == 0 {
					first = line
				}
				out.Write(text)
				out.WriteByte('\n')
				last = line
				if cut {
					cutLines = append(cutLines, line)
				}
			} else {
				stopped = true
			}
		}
		if stopped && scanned > readCountLimit {
			full = false
			break
		}
		if err == io.EOF {
			break
		}
	}
	if first == 0 {
		return fmt.Sprintf("%s has %s; there is nothing from line %d on.", path, lineCount(line, full), offset), nil
	}
	var b strings.Builder
	of := strconv.Itoa(line)
	if !full {
		of = "at least " + of
	}
	fmt.Fprintf(&b, "%s, lines %d–%d of %s:\n", path, first, last, of)
	b.WriteString(out.String())
	for _, n := range cutLines {
		fmt.Fprintf(&b, "[line %d is longer than %s: only its start is shown]\n", n, chat.ByteSize(readMaxLine))
	}
	if stopped {
		fmt.Fprintf(&b, "[more from line %d: read again with offset %d]", last+1, last+1)
	} else {
		b.WriteString("[end of file]")
	}
	return b.String(), nil
}

// lineCount is "120 lines", or "at least 120 lines" when the count
// stopped early.
func lineCount(n int, full bool) string {
	s := plural(n, "line")
	if !full {
		return "at least " + s
	}
	return s
}

// readLine reads one line of r: at most readMaxLine bytes of it (cut on a
// character boundary, cut set), without its line end; n is how many bytes
// it took from r, line end included. At the end of r it returns n == 0 and
// io.EOF.
func readLine(r *bufio.Reader) (text []byte, cut bool, n int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if room := readMaxLine - len(text); len(chunk) > room {
			text = append(text, chunk[:room]...)
			cut = true
		} else {
			text = append(text, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		text = bytes.TrimSuffix(bytes.TrimSuffix(text, []byte("\n")), []byte("\r"))
		if cut {
			for i := 0; i < utf8.UTFMax && len(text) > 0 && !utf8.Valid(text); i++ {
				text = text[:len(text)-1]
			}
		}
		return text, cut, n, err
	}
}

// readFile is the read tool of s.
func (s *session) readFile(args readArgs) (string, error) {
	return readWorkspaceFile(openBeneath, s.workspace, args)
}
