package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// File is what a journal appends through: an *os.File, or in tests one
// that fails as a full disk does (JournalOptions.Wrap).
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// JournalOptions configure a journal.
type JournalOptions struct {
	// MaxLine is the longest line (without its line end) Read hands over;
	// a longer one is skipped unread. It also bounds what Whole is asked
	// about.
	MaxLine int
	// Whole reports whether a last line without its line end is a whole
	// record that only lacks the newline: it is then given one rather than
	// cut off. nil: such a line is always cut off.
	Whole func(line []byte) bool
	// Wrap, when set, wraps the file appends go through (tests inject a
	// full disk with it).
	Wrap func(File) File
}

// Journal is an open journal: a file of lines that only grows (see the
// package overview). It is not safe for concurrent use: its owner orders
// the calls.
type Journal struct {
	path string
	o    JournalOptions
	f    *os.File // read from, and the file w wraps
	w    File     // appended through
	// size is the length of the file's complete lines: what it holds
	// after the last append that succeeded.
	size int64
	// torn is set when a failed append may have left part of a line after
	// size that could not be cut off yet: it is, before the next append.
	torn bool
}

// ErrNotLine is returned for an append that does not end with a line end.
var ErrNotLine = errors.New("store: a journal append must end with a line end")

// OpenJournal opens the journal at path, creating it (0600) when missing
// (its folder must exist), and settles its tail (see Tail). A symlink at
// path is refused, not followed.
func OpenJournal(path string, o JournalOptions) (*Journal, Tail, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, Tail{}, err
	}
	size, tail, err := settleTail(f, o.MaxLine, o.Whole)
	if err != nil {
		f.Close()
		return nil, Tail{}, fmt.Errorf("%s: %w", path, err)
	}
	j := &Journal{path: path, o: o, size: size}
	j.setFile(f)
	return j, tail, nil
}

func (j *Journal) setFile(f *os.File) {
	j.f, j.w = f, File(f)
	if j.o.Wrap != nil {
		j.w = j.o.Wrap(f)
	}
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// Size is the length of the journal's complete lines.
func (j *Journal) Size() int64 { return j.size }

// Read calls fn with each line of the journal as Lines does, bounded by
// MaxLine (nil: a longer line, with its size). It reads what the journal
// held when opened or last appended to.
func (j *Journal) Read(fn func(line []byte, size int64)) error {
	if j.f == nil {
		return os.ErrClosed
	}
	return Lines(io.NewSectionReader(j.f, 0, j.size), j.o.MaxLine, fn)
}

// Append writes b (one or more whole lines) and syncs it, or leaves the
// journal as it was: a write cut short or a failed sync is cut off again,
// so the next line never follows a partial one. When even that cut fails
// it is tried again before the next append.
func (j *Journal) Append(b []byte) error { return j.append(b, true) }

// AppendUnsynced is Append without the sync: a kill of the bot loses none
// of it (the kernel has it), a power cut may. For lines whose loss costs
// little (a mark that makes work be done twice rather than not at all).
func (j *Journal) AppendUnsynced(b []byte) error { return j.append(b, false) }

func (j *Journal) append(b []byte, sync bool) error {
	if j.f == nil {
		return os.ErrClosed
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return ErrNotLine
	}
	if j.torn {
		if err := j.w.Truncate(j.size); err != nil {
			return fmt.Errorf("cut off a partial line: %w", err)
		}
		j.torn = false
	}
	_, err := j.w.Write(b)
	if err == nil && sync {
		err = j.w.Sync()
	}
	if err != nil {
		if terr := j.w.Truncate(j.size); terr != nil {
			j.torn = true
		}
		return err
	}
	j.size += int64(len(b))
	return nil
}

// Empty cuts the journal to nothing.
func (j *Journal) Empty() error {
	if j.f == nil {
		return os.ErrClosed
	}
	if err := j.w.Truncate(0); err != nil {
		return err
	}
	j.size, j.torn = 0, false
	return nil
}

// Replace replaces the journal with b (whole lines), as WriteFile does:
// a crash leaves the old journal or the new one. The journal goes on in
// the new file.
func (j *Journal) Replace(b []byte) error {
	if j.f == nil {
		return os.ErrClosed
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return ErrNotLine
	}
	f, err := replace(j.path, b, nil, osSteps(), true)
	if err != nil {
		return err
	}
	_ = j.w.Close()
	j.setFile(f)
	j.size, j.torn = int64(len(b)), false
	return nil
}

// Close closes the journal; later calls are no-ops.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	err := j.w.Close()
	j.f, j.w = nil, nil
	return err
}
