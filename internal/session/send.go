package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The built-in send tool delivers a workspace file to the chat.

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

// resolveSendPath checks that rel names a regular file inside workspace,
// not under .volcanic/ and not reached through a symlink that leaves the
// workspace, and returns its absolute path. Errors are written for the
// model: they say what to do instead.
func resolveSendPath(workspace, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("path is required: give a workspace-relative path such as browser/page.png")
	}
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is absolute: give a path relative to the workspace", rel)
	}
	clean := filepath.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, clean))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no file at %q in the workspace", rel)
		}
		return "", fmt.Errorf("path %q: %v", rel, err)
	}
	inside, err := filepath.Rel(root, real)
	if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leads outside the workspace (through a symlink)", rel)
	}
	if inside == stateDir || strings.HasPrefix(inside, stateDir+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is in the bot's private %s/ folder, which cannot be sent", rel, stateDir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("path %q: %v", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("path %q is not a regular file", rel)
	}
	if fi.Size() > MaxSendBytes {
		return "", fmt.Errorf("%q is %.1f MB; Telegram accepts at most 50 MB from a bot", rel, float64(fi.Size())/(1<<20))
	}
	if fi.Size() == 0 {
		return "", fmt.Errorf("%q is empty", rel)
	}
	return real, nil
}
