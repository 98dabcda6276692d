package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// isJSON is a Whole: a JSON object is a whole record.
func isJSON(b []byte) bool { return json.Valid(b) && strings.HasPrefix(string(b), "{") }

// Opening a journal settles its tail: a torn last line is cut off, a whole
// record that only lacks its newline is given one (when the caller can tell
// one), the rest is left as it is and read as it is — a corrupt line in the
// middle and a line over MaxLine among them.
func TestOpenJournal(t *testing.T) {
	long := strings.Repeat("x", 20)
	tests := []struct {
		name      string
		in        string
		whole     func([]byte) bool
		wantTail  Tail
		wantFile  string
		wantLines string // joined by |, an over-long line as <long size>
	}{
		{"empty", "", isJSON, Tail{}, "", ""},
		{"whole lines", "{}\n{\"a\":1}\n", isJSON, Tail{}, "{}\n{\"a\":1}\n", `{}|{"a":1}`},
		{"a torn last line is cut", "{}\n{\"a\":", isJSON, Tail{Cut: 5}, "{}\n", "{}"},
		{"a torn only line is cut", "{\"a\":", isJSON, Tail{Cut: 5}, "", ""},
		{"a whole last record is given its newline", "{}\n{\"a\":1}", isJSON, Tail{Mended: true}, "{}\n{\"a\":1}\n", `{}|{"a":1}`},
		{"crlf: a whole last record", "{}\r\n{\"a\":1}\r", isJSON, Tail{Mended: true}, "{}\r\n{\"a\":1}\r\n", `{}|{"a":1}`},
		{"no Whole: the last line is cut whatever it is", "{}\n{\"a\":1}", nil, Tail{Cut: 7}, "{}\n", "{}"},
		{"a last line over MaxLine is cut unread", "{}\n" + long, func([]byte) bool { return true }, Tail{Cut: 20}, "{}\n", "{}"},
		{"a corrupt middle line is read as it is", "{}\nnot json\n{}\n", isJSON, Tail{}, "{}\nnot json\n{}\n", "{}|not json|{}"},
		{"a long middle line is skipped, the rest read", "{}\n" + long + "\n{}\n", isJSON, Tail{}, "{}\n" + long + "\n{}\n", "{}|<long 21>|{}"},
		{"empty lines", "\n\n", isJSON, Tail{}, "\n\n", "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j.jsonl")
			write(t, path, tt.in, 0o600)
			j, tail, err := OpenJournal(path, JournalOptions{MaxLine: 10, Whole: tt.whole})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if tail != tt.wantTail {
				t.Errorf("tail %+v, want %+v", tail, tt.wantTail)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.wantFile {
				t.Errorf("file %q, want %q", b, tt.wantFile)
			}
			if got := readAll(t, j); got != tt.wantLines {
				t.Errorf("lines %q, want %q", got, tt.wantLines)
			}
			if j.Size() != int64(len(tt.wantFile)) {
				t.Errorf("size %d, want %d", j.Size(), len(tt.wantFile))
			}
			// What is appended next is a line of its own.
			if err := j.Append([]byte("{\"next\":1}\n")); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.wantFile+"{\"next\":1}\n" {
				t.Errorf("after an append the file is %q", b)
			}
		})
	}
}

func readAll(t *testing.T, j *Journal) string {
	t.Helper()
	var got []string
	if err := j.Read(func(line []byte, size int64) {
		if line == nil {
			got = append(got, fmt.Sprintf("<long %d>", size))
			return
		}
		got = append(got, string(line))
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(got, "|")
}

// A symlink where the journal lives is refused, never appended through.
func TestOpenJournalRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "elsewhere")
	write(t, outside, "not the bot's\n", 0o644)
	path := filepath.Join(dir, "transcript.jsonl")
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenJournal(path, JournalOptions{MaxLine: 10}); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("err %v, want ELOOP", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "not the bot's\n" {
		t.Errorf("the linked file changed: %q", b)
	}
}

// fullDisk takes room more bytes, then fails writes as a full disk does
// (a short write); sync and truncate fail when told.
type fullDisk struct {
	File
	room                int
	failSync, failTrunc bool
	syncs               int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.room {
		d.room -= len(p)
		return d.File.Write(p)
	}
	n, _ := d.File.Write(p[:d.room])
	d.room = 0
	return n, syscall.ENOSPC
}

func (d *fullDisk) Sync() error {
	d.syncs++
	if d.failSync {
		return syscall.EIO
	}
	return d.File.Sync()
}

func (d *fullDisk) Truncate(size int64) error {
	if d.failTrunc {
		return syscall.EIO
	}
	return d.File.Truncate(size)
}

// A failed append leaves the journal as it was, whatever failed; a cut
// that failed too is made before the next append.
func TestJournalAppendFails(t *testing.T) {
	tests := []struct {
		name  string
		disk  fullDisk
		retry bool // the disk is mended before the next append
		want  string
	}{
		{"a short write is cut off", fullDisk{room: 3}, true, "{}\n{\"b\":2}\n"},
		{"a failed sync is cut off", fullDisk{room: 1 << 20, failSync: true}, true, "{}\n{\"b\":2}\n"},
		{"a cut that failed is made before the next append", fullDisk{room: 3, failTrunc: true}, true, "{}\n{\"b\":2}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j.jsonl")
			write(t, path, "{}\n", 0o600)
			disk := tt.disk
			j, _, err := OpenJournal(path, JournalOptions{MaxLine: 100, Wrap: func(f File) File { disk.File = f; return &disk }})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if err := j.Append([]byte("{\"a\":1}\n")); err == nil {
				t.Fatal("no error from a full disk")
			}
			if j.Size() != 3 {
				t.Errorf("size %d after a failed append, want 3", j.Size())
			}
			disk.room, disk.failSync, disk.failTrunc = 1<<20, false, false
			if err := j.Append([]byte("{\"b\":2}\n")); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.want {
				t.Errorf("file %q, want %q", b, tt.want)
			}
		})
	}
}

// Append syncs, AppendUnsynced does not; neither takes what is not a line.
func TestJournalSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	disk := fullDisk{room: 1 << 20}
	j, _, err := OpenJournal(path, JournalOptions{MaxLine: 100, Wrap: func(f File) File { disk.File = f; return &disk }})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, step := range []struct {
		name      string
		append    func([]byte) error
		line      string
		wantSyncs int
		wantErr   error
	}{
		{"synced", j.Append, "a\n", 1, nil},
		{"unsynced", j.AppendUnsynced, "b\n", 1, nil},
		{"two lines, one sync", j.Append, "c\nd\n", 2, nil},
		{"no line end", j.Append, "e", 2, ErrNotLine},
		{"nothing", j.AppendUnsynced, "", 2, ErrNotLine},
	} {
		if err := step.append([]byte(step.line)); !errors.Is(err, step.wantErr) {
			t.Errorf("%s: err %v, want %v", step.name, err, step.wantErr)
		}
		if disk.syncs != step.wantSyncs {
			t.Errorf("%s: %d syncs, want %d", step.name, disk.syncs, step.wantSyncs)
		}
	}
	if got := readAll(t, j); got != "a|b|c|d" {
		t.Errorf("lines %q", got)
	}
}

// Replace puts the new content in place as WriteFile does, and the
// journal goes on in it; Empty cuts it to nothing.
func TestJournalReplaceAndEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "updates.jsonl")
	write(t, path, "old\nold\n", 0o644)
	j, _, err := OpenJournal(path, JournalOptions{MaxLine: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Replace([]byte("kept")); !errors.Is(err, ErrNotLine) {
		t.Errorf("half a line: %v, want ErrNotLine", err)
	}
	if err := j.Replace([]byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	if err := j.Append([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "kept\nnew\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("file %q %v, want \"kept\\nnew\\n\" 0600", b, fi.Mode().Perm())
	}
	if got := readAll(t, j); got != "kept|new" {
		t.Errorf("lines %q", got)
	}
	if names := list(t, dir); len(names) != 1 {
		t.Errorf("the folder holds %v", names)
	}
	if err := j.Empty(); err != nil {
		t.Fatal(err)
	}
	if err := j.AppendUnsynced([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "after\n" || j.Size() != 6 {
		t.Errorf("file %q size %d after Empty and an append", b, j.Size())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Append([]byte("x\n")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
}

func TestLines(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string // lines joined by |, a skipped line as <long n>
	}{
		{"plain", "a\nbb\n", 10, "a|bb"},
		{"no newline at the end", "a\nbb", 10, "a|bb"},
		{"crlf", "a\r\nb\r\n", 10, "a|b"},
		{"a long line is skipped, the rest read", "a\n" + strings.Repeat("x", 20) + "\nb\n", 10, "a|<long 21>|b"},
		{"a long last line", "a\n" + strings.Repeat("x", 20), 10, "a|<long 20>"},
		{"exactly the limit", strings.Repeat("y", 10) + "\n", 10, strings.Repeat("y", 10)},
		{"a line longer than the read buffer", strings.Repeat("z", 70<<10) + "\nb\n", 80 << 10, strings.Repeat("z", 70<<10) + "|b"},
		{"empty lines", "\n\n", 10, "|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := Lines(strings.NewReader(tt.in), tt.limit, func(line []byte, size int64) {
				if line == nil {
					got = append(got, fmt.Sprintf("<long %d>", size))
					return
				}
				got = append(got, string(line))
			})
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(got, "|"); s != tt.want {
				t.Errorf("lines = %q, want %q", s, tt.want)
			}
		})
	}
}
