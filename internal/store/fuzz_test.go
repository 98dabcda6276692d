package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whatever bytes a journal holds, opening and reading it agree with a
// naive reader that splits the whole file at its newlines: the same lines,
// the same tail decision, memory bounded (an over-long line only by its
// size); and after an append the next open reads the same lines and the
// new one.
func FuzzJournal(f *testing.F) {
	for _, s := range []string{"", "{}\n", "{}\n{\"a\":", "{}\n{\"a\":1}", "a\r\nb\r", "\n\n\r\n", "{}\n" + strings.Repeat("x", 40) + "\n{\"a\":1}",
		strings.Repeat("y", 40), "{\"a\":1}\r"} {
		f.Add([]byte(s), uint8(16))
	}
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		limit := int(max)
		path := filepath.Join(t.TempDir(), "j.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		wantFile, wantTail, wantLines := naiveJournal(string(data), limit)
		j, tail, err := OpenJournal(path, JournalOptions{MaxLine: limit, Whole: isJSON})
		if err != nil {
			t.Fatal(err)
		}
		if tail != wantTail {
			t.Errorf("tail %+v, want %+v", tail, wantTail)
		}
		if b, _ := os.ReadFile(path); string(b) != wantFile {
			t.Errorf("file %q, want %q", b, wantFile)
		}
		if got := readAll(t, j); got != strings.Join(wantLines, "|") {
			t.Errorf("lines %q, want %q", got, strings.Join(wantLines, "|"))
		}
		if err := j.Append([]byte("{}\n")); err != nil {
			t.Fatal(err)
		}
		j.Close()
		j, tail, err = OpenJournal(path, JournalOptions{MaxLine: limit, Whole: isJSON})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if tail != (Tail{}) {
			t.Errorf("tail %+v after an append, want none", tail)
		}
		_, _, after := naiveJournal(wantFile+"{}\n", limit)
		if got, want := readAll(t, j), strings.Join(after, "|"); got != want {
			t.Errorf("lines after an append %q, want %q", got, want)
		}
	})
}

// naiveJournal is what opening a journal holding s should leave: the file,
// the tail decision and the lines read (an over-long one as <long size>).
func naiveJournal(s string, limit int) (file string, tail Tail, lines []string) {
	parts := strings.Split(s, "\n")
	complete, last := parts[:len(parts)-1], parts[len(parts)-1]
	file = s
	if last != "" {
		if len(last) <= limit && isJSON([]byte(strings.TrimSuffix(last, "\r"))) {
			file, tail = s+"\n", Tail{Mended: true}
			complete = append(complete, last)
		} else {
			file, tail = s[:len(s)-len(last)], Tail{Cut: int64(len(last))}
		}
	}
	for _, l := range complete {
		if len(l) > limit {
			lines = append(lines, fmt.Sprintf("<long %d>", len(l)+1))
			continue
		}
		lines = append(lines, strings.TrimSuffix(l, "\r"))
	}
	return file, tail, lines
}
