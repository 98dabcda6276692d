package store

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// Lines calls fn with every line of r, without its line end ("\n" or
// "\r\n"), and the line's size in r. A line longer than limit is not kept
// in memory: fn gets nil and its size. A last line without its line end is
// handed over too (a journal's tail is settled by OpenJournal before it is
// read). Memory stays within limit whatever r holds. A read error ends the
// reading, after the lines before it.
func Lines(r io.Reader, limit int, fn func(line []byte, size int64)) error {
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

// lastLineStart returns the offset just after the last '\n' before size
// (0 when there is none), reading f backwards.
func lastLineStart(f io.ReaderAt, size int64) (int64, error) {
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

// Tail is what opening a journal did to a last line without its line end.
type Tail struct {
	// Mended: the line was a whole record (Whole said so) and was given
	// its line end.
	Mended bool
	// Cut is the size of the torn line cut off; 0: none.
	Cut int64
}

// settleTail makes f end with a complete line and returns its size: a
// last line without its line end is given one when it is at most limit
// long and whole says it is a record, and cut off otherwise. Both are
// synced: what the journal's reader then sees is what appends follow.
func settleTail(f *os.File, limit int, whole func([]byte) bool) (int64, Tail, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, Tail{}, err
	}
	size := fi.Size()
	if size == 0 {
		return 0, Tail{}, nil
	}
	end := make([]byte, 1)
	if _, err := f.ReadAt(end, size-1); err != nil {
		return 0, Tail{}, err
	}
	if end[0] == '\n' {
		return size, Tail{}, nil
	}
	start, err := lastLineStart(f, size)
	if err != nil {
		return 0, Tail{}, err
	}
	if n := size - start; whole != nil && n <= int64(limit) {
		last := make([]byte, n)
		if _, err := f.ReadAt(last, start); err != nil {
			return 0, Tail{}, err
		}
		if whole(bytes.TrimSuffix(last, []byte("\r"))) {
			if _, err := f.Write([]byte("\n")); err != nil {
				return 0, Tail{}, err
			}
			return size + 1, Tail{Mended: true}, f.Sync()
		}
	}
	if err := f.Truncate(start); err != nil {
		return 0, Tail{}, err
	}
	return start, Tail{Cut: size - start}, f.Sync()
}
