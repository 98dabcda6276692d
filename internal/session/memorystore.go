package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// A chat's memory on disk: the notes the user asked the bot to keep
// (memory.go is the tool and the prompt), one JSON file in the chat's
// private folder — never in the workspace its servers see —, replaced
// whole on every change (store.WriteFile: 0600, written beside it,
// synced, renamed), so a crash leaves the old list or the new one. It
// survives /new (which archives only the transcript) and restarts, and
// the disk budget never counts or prunes it.
//
// A file that cannot be read (cut short, edited by hand into something
// that is not the format, over memoryFileMax) is an error for every
// change but Clear: it is left as it is, so the entries it holds are not
// lost by a change made over it, and the operator may mend it.

const (
	// memoryName is the file in the chat's private folder.
	memoryName = "memory.json"
	// MemoryMaxBytes caps the memory of a chat: the entries' text, in
	// bytes (UTF-8), added up. It is in every request of the chat.
	MemoryMaxBytes = 4096
	// MemoryMaxEntry caps one entry, in bytes: notes are short.
	MemoryMaxEntry = 512
	// MemoryMaxEntries caps how many entries a chat keeps (each has its
	// button in /memory).
	MemoryMaxEntries = 50
	// memoryFileMax is the largest file read: far over what the caps let
	// the bot write, so only a file that is not the bot's hits it.
	memoryFileMax = 64 << 10
)

// MemoryEntry is one note of a chat's memory.
type MemoryEntry struct {
	Text string    `json:"text"`
	At   time.Time `json:"at"`
	By   int64     `json:"by,omitempty"` // the user whose turn added it (0: unknown)
}

// memoryFile is the file's shape.
type memoryFile struct {
	Entries []MemoryEntry `json:"entries"`
}

// MemoryError is a chat's memory file failing to be read or written: the
// operator's detail is Err; tell the user the memory could not be read or
// changed, nothing more.
type MemoryError struct{ Err error }

func (e *MemoryError) Error() string { return "the chat's memory: " + e.Err.Error() }
func (e *MemoryError) Unwrap() error { return e.Err }

// memoryOutcome is what a change did.
type memoryOutcome int

const (
	memoryChanged   memoryOutcome = iota
	memoryDuplicate               // add: the text is an entry already
	memoryFull                    // add: over MemoryMaxBytes or MemoryMaxEntries
	memoryTooLong                 // add: one entry over MemoryMaxEntry
	memoryEmpty                   // add: nothing but spaces
	memoryNotFound                // remove: no entry matches
)

// memoryChange is what add or remove did: the outcome, the entry it
// concerns (the one added, the duplicate, the one removed) and its number
// (from 1), and the entries now.
type memoryChange struct {
	outcome memoryOutcome
	entry   MemoryEntry
	number  int
	entries []MemoryEntry
}

// memories are the chats' memory files. mu orders the changes, each a
// read, a change and a store.WriteFile: a chat's memory tool calls and
// /memory (from the bot's worker) come concurrently. No other process
// writes them: the data directory's lock keeps a second bot out.
type memories struct {
	mu sync.Mutex
}

// memoryPath is the memory file of the chat whose private folder is dir.
func memoryPath(private string) string { return filepath.Join(private, memoryName) }

// readMemory reads path: none when it is missing.
func readMemory(path string) ([]MemoryEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, memoryFileMax+1))
	if err != nil {
		return nil, err
	}
	if len(data) > memoryFileMax {
		return nil, fmt.Errorf("%s is over %d bytes: not a memory file the bot wrote", path, memoryFileMax)
	}
	var mf memoryFile
	if err := json.Unmarshal(data, &mf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range mf.Entries {
		if strings.TrimSpace(e.Text) == "" {
			return nil, fmt.Errorf("%s: entry %d has no text", path, i+1)
		}
	}
	return mf.Entries, nil
}

func writeMemory(path string, list []MemoryEntry) error {
	if len(list) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.MarshalIndent(memoryFile{list}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// list reads path's entries.
func (ms *memories) list(path string) ([]MemoryEntry, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return readMemory(path)
}

// add keeps text (normalised: memoryText) in path's memory unless it is
// empty, too long, a duplicate or over the caps.
func (ms *memories) add(path, text string, by int64, at time.Time) (memoryChange, error) {
	text = memoryText(text)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	list, err := readMemory(path)
	if err != nil {
		return memoryChange{}, err
	}
	c := memoryChange{entries: list, entry: MemoryEntry{Text: text, At: at.UTC(), By: by}}
	switch {
	case text == "":
		c.outcome = memoryEmpty
		return c, nil
	case len(text) > MemoryMaxEntry:
		c.outcome = memoryTooLong
		return c, nil
	}
	for i, e := range list {
		if sameMemory(e.Text, text) {
			c.outcome, c.entry, c.number = memoryDuplicate, e, i+1
			return c, nil
		}
	}
	if memoryBytes(list)+len(text) > MemoryMaxBytes || len(list) >= MemoryMaxEntries {
		c.outcome = memoryFull
		return c, nil
	}
	next := append(list[:len(list):len(list)], c.entry)
	if err := writeMemory(path, next); err != nil {
		return memoryChange{}, err
	}
	c.outcome, c.number, c.entries = memoryChanged, len(next), next
	return c, nil
}

// remove deletes the entry of path's memory that which names: an entry's
// text (memoryText's form, any case), or else, when byNumber, its number
// in the list ("2", "#2").
func (ms *memories) remove(path, which string, byNumber bool) (memoryChange, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	list, err := readMemory(path)
	if err != nil {
		return memoryChange{}, err
	}
	i := findMemory(list, which, byNumber)
	if i < 0 {
		return memoryChange{outcome: memoryNotFound, entries: list}, nil
	}
	next := append(list[:i:i], list[i+1:]...)
	if err := writeMemory(path, next); err != nil {
		return memoryChange{}, err
	}
	return memoryChange{outcome: memoryChanged, entry: list[i], number: i + 1, entries: next}, nil
}

// clear empties path's memory and returns how many entries it held. A
// file that cannot be read is removed all the same (-1 entries): the user
// asked for it empty.
func (ms *memories) clear(path string) (int, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	list, err := readMemory(path)
	n := len(list)
	if err != nil {
		n = -1
	}
	if err := writeMemory(path, nil); err != nil {
		return 0, err
	}
	return n, nil
}

// findMemory is the index of the entry which names (see remove), or -1.
func findMemory(list []MemoryEntry, which string, byNumber bool) int {
	text := memoryText(which)
	if text == "" {
		return -1
	}
	for i, e := range list {
		if sameMemory(e.Text, text) {
			return i
		}
	}
	if !byNumber {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimPrefix(text, "#"))
	if err != nil || n < 1 || n > len(list) {
		return -1
	}
	return n - 1
}

// memoryText is text as an entry keeps it: one line, its runs of spaces,
// line ends and other control characters one space, trimmed.
func memoryText(text string) string {
	return strings.Join(strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// sameMemory reports whether two entries' texts are one note: equal but
// for case.
func sameMemory(a, b string) bool { return strings.EqualFold(memoryText(a), memoryText(b)) }

// memoryBytes is what entries take of MemoryMaxBytes.
func memoryBytes(list []MemoryEntry) int {
	n := 0
	for _, e := range list {
		n += len(e.Text)
	}
	return n
}
