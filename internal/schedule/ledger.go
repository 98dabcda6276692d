package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/store"
)

// LedgerFile is the ledger's name in its folder.
const LedgerFile = "ledger.jsonl"

// maxLine bounds a record: a job's last answer and a run's answer are
// bounded by MaxAnswerBytes (32 KiB by default), which JSON may escape to
// six times that.
const maxLine = 1 << 20

// compactAfter is how many records are appended before the ledger is
// rewritten, at least; and then only once they outnumber twice the live
// objects.
const compactAfter = 1024

// keepDone is how long a finished one-off job stays listed.
const keepDone = 7 * 24 * time.Hour

// Ledger is the jobs, runs and deliveries of every chat: a journal of
// records (internal/store), rewritten whole (its atomic replace) when it
// has grown. It is not safe for concurrent use: the Scheduler orders the
// calls.
type Ledger struct {
	j        *store.Journal
	st       *state
	appended int
	// Skipped counts the lines of the file that were no record (over the
	// line limit, or not JSON) when it was opened.
	Skipped int
}

// OpenLedger opens (creating) the ledger in dir and reads it. A torn
// last line (the bot died mid-write) is cut off; a record that is whole
// but lacks its line end is kept.
func OpenLedger(dir string) (*Ledger, error) { return openLedgerWrapped(dir, nil) }

// openLedgerWrapped is OpenLedger with the journal's file wrapped (tests
// fail its writes as a full disk does).
func openLedgerWrapped(dir string, wrap func(store.File) store.File) (*Ledger, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("schedule ledger: %w", err)
	}
	j, _, err := store.OpenJournal(filepath.Join(dir, LedgerFile), store.JournalOptions{MaxLine: maxLine, Whole: json.Valid, Wrap: wrap})
	if err != nil {
		return nil, fmt.Errorf("schedule ledger: %w", err)
	}
	l := &Ledger{j: j, st: newState()}
	err = j.Read(func(line []byte, _ int64) {
		if !l.st.readLine(line) {
			l.Skipped++
		}
	})
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("schedule ledger: read %s: %w", j.Path(), err)
	}
	return l, nil
}

// readLine applies one line; false when it is no record.
func (s *state) readLine(line []byte) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return true
	}
	var r record
	if line == nil || json.Unmarshal(line, &r) != nil {
		return false
	}
	s.apply(r)
	return true
}

// ReadLedger reads the ledger in dir without opening it for writing (a
// running bot may be appending): what `volcanicbot jobs` lists. A torn
// last line is skipped.
func ReadLedger(dir string) ([]JobView, error) {
	f, err := os.Open(filepath.Join(dir, LedgerFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st := newState()
	if err := store.Lines(f, maxLine, func(line []byte, _ int64) { st.readLine(line) }); err != nil {
		return nil, err
	}
	return st.views(func(*Job) bool { return true }), nil
}

// put appends r (synced) and applies it; an error leaves the state as it
// was.
func (l *Ledger) put(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if len(b) > maxLine {
		return fmt.Errorf("schedule ledger: a record of %d bytes", len(b))
	}
	if err := l.j.Append(b); err != nil {
		return fmt.Errorf("schedule ledger: %w", err)
	}
	l.st.apply(r)
	l.appended++
	return nil
}

// compactIfGrown rewrites the ledger when it has grown enough.
func (l *Ledger) compactIfGrown(now time.Time) error {
	if l.appended < compactAfter || l.appended < 2*l.st.live() {
		return nil
	}
	return l.Compact(now)
}

// Compact rewrites the ledger as its state: a crash leaves the old file
// or the new one.
func (l *Ledger) Compact(now time.Time) error {
	var buf bytes.Buffer
	st := newState()
	for _, r := range l.st.records(now.Add(-keepDone)) {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		st.apply(r)
	}
	if err := l.j.Replace(buf.Bytes()); err != nil {
		return fmt.Errorf("schedule ledger: compact: %w", err)
	}
	l.st, l.appended = st, 0
	return nil
}

// Size is the ledger file's length.
func (l *Ledger) Size() int64 { return l.j.Size() }

// Close closes the file.
func (l *Ledger) Close() error { return l.j.Close() }
