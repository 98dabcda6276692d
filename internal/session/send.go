package session

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// The built-in send tool delivers a workspace file to the chat. The file is
// opened by the rules of workspacefile.go (no symlink, nothing outside the
// workspace, a regular file with one name), once: what
// was opened is what is sent. It must be neither empty nor over
// Telegram's limit.

// SendToolName is the built-in tool's name; MCP tools may not take it.
const SendToolName = "send"

// MaxSendBytes is Telegram's upload limit for bots.
const MaxSendBytes = 50 << 20

const sendDescription = "Send a workspace file to the user: images arrive as photos, anything else as a document " +
	"(screenshots, PDFs, downloads)."

var sendSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Workspace-relative, e.g. browser/page.png"},"caption":{"type":"string"}},"required":["path"],"additionalProperties":false}`)

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
// checks what it opened: a regular file inside workspace, reached
// through no symlink, with no other name, not empty
// and not over MaxSendBytes. It returns the open file and its size; the
// caller closes it. Errors are written for the model: they say what to do
// instead.
func openSendFile(workspace, rel string) (*os.File, int64, error) {
	return openSendFileWith(openBeneath, workspace, rel)
}

// openSendFileWith is openSendFile with the open beneath the workspace
// given (tests try the walk where openat2 works).
func openSendFileWith(open beneathFunc, workspace, rel string) (*os.File, int64, error) {
	f, fi, err := openWorkspaceFile(open, workspace, rel, SendToolName)
	if err != nil {
		return nil, 0, err
	}
	if fi.Size() > MaxSendBytes {
		f.Close()
		return nil, 0, fmt.Errorf("%q is %.1f MB; Telegram accepts at most 50 MB from a bot", rel, float64(fi.Size())/(1<<20))
	}
	if fi.Size() == 0 {
		f.Close()
		return nil, 0, fmt.Errorf("%q is empty", rel)
	}
	return f, fi.Size(), nil
}
