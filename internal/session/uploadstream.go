package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// A file a local Bot API server keeps on its disk (up to 2,000 MB) comes
// as an Attachment that opens it: it is copied into the workspace as a
// stream — the kernel's copy between the two files where it can, a 32 KB
// buffer otherwise — and never held whole. It is taken only when the
// workspace's disk keeps, after it, room for the chat's disk budget (what
// its tools may make); what the model and the chat are told of it is
// read back from the copy: its head, or the whole of an image small
// enough to show.

// uploadError is a streamed file that was not kept: why says so to the
// user and the model (the conversation goes on without it); err is the
// operator's.
type uploadError struct {
	why string
	err error
}

func (e *uploadError) Error() string { return "keep an upload: " + e.err.Error() }
func (e *uploadError) Unwrap() error { return e.err }

// errNoRoom is a streamed file the disk has no room for.
var errNoRoom = errors.New("not enough room on the disk")

// roomFor checks that the workspace's disk keeps, after size more bytes,
// room for the chat's disk budget.
func (s *session) roomFor(size int64) error {
	free, err := s.m.o.DiskFree(s.workspace)
	if err != nil {
		s.m.logger.Warn("the room left on the disk is unknown; taking the file", "chat", s.id, "err", err)
		return nil
	}
	if size+s.m.o.DiskBudget > free {
		return &uploadError{
			why: fmt.Sprintf("there is not enough room for it on the bot's disk (%s free, and %s of it is kept for this chat's tools)",
				chat.ByteSize(int(free)), chat.ByteSize(int(s.m.o.DiskBudget))),
			err: fmt.Errorf("%w: %d bytes wanted, %d free, budget %d", errNoRoom, size, free, s.m.o.DiskBudget),
		}
	}
	return nil
}

// copyUpload copies f's content into w, at most f.Size bytes: a source
// that gives more (it grew) or less is an *uploadError.
func copyUpload(w *os.File, f Attachment) error {
	r, err := f.Open()
	if err != nil {
		return &uploadError{why: "it could not be read from the Telegram server's disk", err: err}
	}
	defer r.Close()
	n, err := io.Copy(w, io.LimitReader(r, f.Size+1))
	switch {
	case err != nil: // either side: the server's disk, or the workspace's
		return &uploadError{why: "it could not be copied into the workspace", err: err}
	case n != f.Size:
		return &uploadError{why: "it changed while it was being received", err: fmt.Errorf("copied %d bytes of %d", n, f.Size)}
	}
	return nil
}
