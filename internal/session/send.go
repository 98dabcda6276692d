package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The built-in send tool delivers a workspace file to the chat.
//
// The file is opened once, and what was opened is what is sent: no name is
// checked and then opened again (a racer swapping the file for a symlink
// between the two got files from outside the workspace through). The open
// follows no symlink at any component, even one that stays inside the
// workspace, and cannot leave the workspace (openat2 with RESOLVE_BENEATH
// and RESOLVE_NO_SYMLINKS on Linux; elsewhere, or where openat2 is not
// allowed, a walk that opens one component at a time with O_NOFOLLOW).
// It does not block (O_NONBLOCK: a FIFO swapped in is refused, not waited
// on). The opened file must be a regular file with no other name (a
// hardlink in the workspace to the transcript, or to a file outside it,
// has a link count above 1), neither empty nor over Telegram's limit.

// SendToolName is the built-in tool's name; MCP tools may not take it.
const SendToolName = "send"

// MaxSendBytes is Telegram's upload limit for bots.
const MaxSendBytes = 50 << 20

const sendDescription = "Send a file from the workspace to the user in this chat: images (PNG, JPEG, GIF, WebP) " +
	"arrive as photos, anything else as a document. Use it to deliver screenshots, PDFs and downloads, " +
	"e.g. a screenshot saved with filename \"browser/page.png\"."

var sendSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Workspace-relative path of the file, e.g. browser/page.png"},"caption":{"type":"string","description":"Optional caption shown with the file"}},"required":["path"],"additionalProperties":false}`)

type sendArgs struct {
	Path    string `json:"path"`
	Caption string `json:"caption"`
}

// OutgoingFile is a workspace file opened for sending (see Chat.SendFile).
type OutgoingFile struct {
	// Name is the file's base name, shown to the user.
	Name string
	// Content reads the opened file, from any offset: a retried upload
	// reads it again. It stays valid until SendFile returns.
	Content io.ReaderAt
	// Size is the file's size when it was checked; read no more.
	Size int64
}

// openSendFile opens rel, a workspace-relative path, for sending and
// checks what it opened: a regular file inside workspace, not under
// .volcanic/, reached through no symlink, with no other name, not empty
// and not over MaxSendBytes. It returns the open file and its size; the
// caller closes it. Errors are written for the model: they say what to do
// instead.
func openSendFile(workspace, rel string) (*os.File, int64, error) {
	return openSendFileWith(openBeneath, workspace, rel)
}

// openSendFileWith is openSendFile with the open beneath the workspace
// given (tests try the walk where openat2 works).
func openSendFileWith(open func(dir *os.File, rel string) (int, error), workspace, rel string) (*os.File, int64, error) {
	clean, err := sendPath(rel)
	if err != nil {
		return nil, 0, err
	}
	dir, err := os.Open(workspace)
	if err != nil {
		return nil, 0, fmt.Errorf("workspace: %w", err)
	}
	defer dir.Close()
	fd, err := open(dir, clean)
	if err != nil {
		return nil, 0, openError(rel, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(workspace, clean))
	size, err := checkSendFile(f, rel)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// sendPath checks rel by itself and returns it cleaned, with '/'
// separators.
func sendPath(rel string) (string, error) {
	if rel == "" {
		return "", errors.New("path is required: give a workspace-relative path such as browser/page.png")
	}
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is absolute: give a path relative to the workspace", rel)
	}
	clean := filepath.ToSlash(filepath.Clean(rel))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	if clean == "." {
		return "", fmt.Errorf("path %q is the workspace itself: name a file in it", rel)
	}
	// No symlink is followed, so the cleaned name is where the open goes;
	// the case is ignored for file systems that ignore it.
	if first, _, _ := strings.Cut(clean, "/"); strings.EqualFold(first, stateDir) {
		return "", fmt.Errorf("path %q is in the bot's private %s/ folder, which cannot be sent", rel, stateDir)
	}
	return clean, nil
}

// openError says why the open of rel failed, for the model.
func openError(rel string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EMLINK): // EMLINK: O_NOFOLLOW on the BSDs
		return fmt.Errorf("path %q goes through a symlink: send takes only real files and folders of the workspace, not symlinks", rel)
	case errors.Is(err, syscall.EXDEV):
		return fmt.Errorf("path %q leaves the workspace", rel)
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("no file at %q in the workspace", rel)
	}
	return fmt.Errorf("path %q: %v", rel, err)
}

// checkSendFile checks the opened file and returns its size.
func checkSendFile(f *os.File, rel string) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("path %q: %v", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("path %q is not a regular file", rel)
	}
	if n := linkCount(fi); n != 1 {
		return 0, fmt.Errorf("%q has other names (%d hard links): send takes only files with one name", rel, n)
	}
	if fi.Size() > MaxSendBytes {
		return 0, fmt.Errorf("%q is %.1f MB; Telegram accepts at most 50 MB from a bot", rel, float64(fi.Size())/(1<<20))
	}
	if fi.Size() == 0 {
		return 0, fmt.Errorf("%q is empty", rel)
	}
	return fi.Size(), nil
}
