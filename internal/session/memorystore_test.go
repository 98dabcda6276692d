package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var memoryAt = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// texts are the entries' texts.
func texts(list []MemoryEntry) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Text)
	}
	return out
}

// Adds in turn: what each does, and what the file holds after.
func TestMemoryStoreAdd(t *testing.T) {
	long := strings.Repeat("x", MemoryMaxEntry)
	tests := []struct {
		name    string
		before  []string // added first
		text    string
		outcome memoryOutcome
		number  int
		after   []string
	}{
		{name: "first", text: "My name is Ana", outcome: memoryChanged, number: 1, after: []string{"My name is Ana"}},
		{name: "one line, spaces folded", text: "  likes\ttea\n\nnot  coffee ", outcome: memoryChanged, number: 1,
			after: []string{"likes tea not coffee"}},
		{name: "appended", before: []string{"a", "b"}, text: "c", outcome: memoryChanged, number: 3, after: []string{"a", "b", "c"}},
		{name: "duplicate but for case and spaces", before: []string{"a", "My name is Ana"}, text: "my name  is ANA\n",
			outcome: memoryDuplicate, number: 2, after: []string{"a", "My name is Ana"}},
		{name: "empty", text: " \n\t", outcome: memoryEmpty},
		{name: "an entry at its cap", text: long, outcome: memoryChanged, number: 1, after: []string{long}},
		{name: "an entry over its cap", text: long + "y", outcome: memoryTooLong},
		{name: "a multi-byte entry over its cap", text: strings.Repeat("é", MemoryMaxEntry/2+1), outcome: memoryTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ms memories
			path := memoryPath(t.TempDir())
			for _, b := range tt.before {
				if _, err := ms.add(path, b, 7, memoryAt); err != nil {
					t.Fatal(err)
				}
			}
			c, err := ms.add(path, tt.text, 7, memoryAt)
			if err != nil {
				t.Fatal(err)
			}
			if c.outcome != tt.outcome || c.number != tt.number {
				t.Errorf("outcome %d, number %d; want %d, %d", c.outcome, c.number, tt.outcome, tt.number)
			}
			list, err := ms.list(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(list); !slices.Equal(got, tt.after) {
				t.Errorf("kept %q, want %q", got, tt.after)
			}
		})
	}
}

// The memory is capped in bytes and in entries: a full one refuses, and
// keeps what it has.
func TestMemoryStoreFull(t *testing.T) {
	var ms memories
	path := memoryPath(t.TempDir())
	entry := strings.Repeat("a", MemoryMaxEntry-2)
	n := 0
	for ; (n+1)*(len(entry)+2) <= MemoryMaxBytes; n++ {
		if c, err := ms.add(path, entry+string(rune('A'+n/26))+string(rune('a'+n%26)), 1, memoryAt); err != nil || c.outcome != memoryChanged {
			t.Fatalf("entry %d: %d, %v", n+1, c.outcome, err)
		}
	}
	before, _ := os.ReadFile(path)
	c, err := ms.add(path, "one more", 1, memoryAt)
	if err != nil || c.outcome != memoryFull || len(c.entries) != n {
		t.Fatalf("over the byte cap: %d, %d entries, %v", c.outcome, len(c.entries), err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused add changed the file")
	}
	// The count cap: short entries.
	path = memoryPath(t.TempDir())
	for i := range MemoryMaxEntries {
		if c, err := ms.add(path, "note "+strings.Repeat("i", i+1), 1, memoryAt); err != nil || c.outcome != memoryChanged {
			t.Fatalf("entry %d: %d, %v", i+1, c.outcome, err)
		}
	}
	if c, err := ms.add(path, "one more", 1, memoryAt); err != nil || c.outcome != memoryFull {
		t.Fatalf("over the entry cap: %d, %v", c.outcome, err)
	}
}

// remove takes an entry by its text (any case) or, for the tool, its
// number; the bot's buttons never by number.
func TestMemoryStoreRemove(t *testing.T) {
	tests := []struct {
		name     string
		which    string
		byNumber bool
		outcome  memoryOutcome
		removed  string
		after    []string
	}{
		{name: "by text", which: "Likes TEA", outcome: memoryChanged, removed: "likes tea", after: []string{"Ana", "3"}},
		{name: "by number", which: "1", byNumber: true, outcome: memoryChanged, removed: "Ana", after: []string{"likes tea", "3"}},
		{name: "by #number", which: " #2 ", byNumber: true, outcome: memoryChanged, removed: "likes tea", after: []string{"Ana", "3"}},
		{name: "text wins over number", which: "3", byNumber: true, outcome: memoryChanged, removed: "3", after: []string{"Ana", "likes tea"}},
		{name: "number out of range", which: "4", byNumber: true, outcome: memoryNotFound, after: []string{"Ana", "likes tea", "3"}},
		{name: "no number for the buttons", which: "1", outcome: memoryNotFound, after: []string{"Ana", "likes tea", "3"}},
		{name: "no such text", which: "Bob", byNumber: true, outcome: memoryNotFound, after: []string{"Ana", "likes tea", "3"}},
		{name: "empty", which: " ", byNumber: true, outcome: memoryNotFound, after: []string{"Ana", "likes tea", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ms memories
			path := memoryPath(t.TempDir())
			for _, s := range []string{"Ana", "likes tea", "3"} {
				if _, err := ms.add(path, s, 1, memoryAt); err != nil {
					t.Fatal(err)
				}
			}
			c, err := ms.remove(path, tt.which, tt.byNumber)
			if err != nil {
				t.Fatal(err)
			}
			if c.outcome != tt.outcome || c.entry.Text != tt.removed {
				t.Errorf("outcome %d, removed %q; want %d, %q", c.outcome, c.entry.Text, tt.outcome, tt.removed)
			}
			list, _ := ms.list(path)
			if got := texts(list); !slices.Equal(got, tt.after) {
				t.Errorf("kept %q, want %q", got, tt.after)
			}
		})
	}
}

// The file: 0600, in the folder given, nothing left beside it; gone with
// its last entry.
func TestMemoryStoreFile(t *testing.T) {
	var ms memories
	dir := t.TempDir()
	path := memoryPath(dir)
	if _, err := ms.add(path, "Ana", 1001, memoryAt); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if want := `{
  "entries": [
    {
      "text": "Ana",
      "at": "2026-12-02T10:00:00Z",
      "by": 1001
    }
  ]
}
`; string(data) != want {
		t.Errorf("file %s, want %s", data, want)
	}
	if _, err := ms.remove(path, "ana", false); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the folder: %v", entries)
	}
}

// A file cut short or not the format is an error for every change but
// clear, and is left as it is: what it holds is not lost. Clear removes
// it (the user asked for the memory empty).
func TestMemoryStoreUnreadable(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"torn", `{"entries":[{"text":"Ana","at":"2026-12-02T10:00:00Z"},{"text":"li`},
		{"not the format", `["Ana"]`},
		{"an entry without text", `{"entries":[{"text":" "}]}`},
		{"too big", `{"entries":[{"text":"` + strings.Repeat("a", memoryFileMax) + `"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ms memories
			dir := t.TempDir()
			path := memoryPath(dir)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			other := memoryPath(filepath.Join(dir, "other"))
			if err := os.Mkdir(filepath.Dir(other), 0o700); err != nil {
				t.Fatal(err)
			}
			if _, err := ms.add(other, "Bob", 2, memoryAt); err != nil {
				t.Fatal(err)
			}
			if _, err := ms.list(path); err == nil {
				t.Error("list: no error")
			}
			if _, err := ms.add(path, "more", 1, memoryAt); err == nil {
				t.Error("add: no error")
			}
			if _, err := ms.remove(path, "1", true); err == nil {
				t.Error("remove: no error")
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Error("a failed change rewrote the file")
			}
			if n, err := ms.clear(path); err != nil || n != -1 {
				t.Errorf("clear: %d, %v", n, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after clear: %v", err)
			}
			if list, err := ms.list(other); err != nil || !slices.Equal(texts(list), []string{"Bob"}) {
				t.Errorf("another chat's memory: %q, %v", texts(list), err)
			}
		})
	}
}
