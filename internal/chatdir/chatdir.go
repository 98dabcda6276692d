// Package chatdir says where a chat's files live in the data directory:
// two folders side by side, never one inside the other.
//
//	<data>/chats/<key>/    the workspace: the root and working directory of
//	                       the chat's MCP servers (the browser's too). It
//	                       holds only the chat's files: uploads, screenshots,
//	                       downloads, what the tools write.
//	<data>/private/<key>/  the bot's own state of the chat: the transcript
//	                       and its archives, the images of the conversation,
//	                       the mark of a running turn, the browser's saved
//	                       state and the per-chat browser profile.
//
// No server is given the private folder as a root or a working directory,
// and no path a server is allowed to use leads into it: what a tool, a page
// or a server can reach (the workspace) is apart from what the bot keeps.
// Versions before this one kept the private state under the workspace
// (<workspace>/.volcanic/); Migrate moves it.
package chatdir

import (
	"os"
	"path/filepath"
	"strconv"
)

const (
	chatsDir   = "chats"
	privateDir = "private"
)

// ResultsDir is the workspace folder the MCP client saves tool results
// over the cap in, whole, for the model (and its tools) to read on; the
// chat's disk budget prunes it.
const ResultsDir = "results"

// Layout is the chat folders of one data directory. The zero value is a
// layout rooted in the current directory.
type Layout struct {
	data string
}

// New is the layout of dataDir. It does no I/O.
func New(dataDir string) Layout { return Layout{data: dataDir} }

// key is a chat's name in paths: the one place a chat becomes a path
// element (a forum topic would add itself here).
func key(chatID int64) string { return strconv.FormatInt(chatID, 10) }

// parseKey is key's inverse; ok is false for a name no chat has.
func parseKey(name string) (chatID int64, ok bool) {
	id, err := strconv.ParseInt(name, 10, 64)
	if err != nil || key(id) != name {
		return 0, false
	}
	return id, true
}

// Workspace is the chat's workspace: what its servers see.
func (l Layout) Workspace(chatID int64) string {
	return filepath.Join(l.data, chatsDir, key(chatID))
}

// Private is the bot's private folder of the chat, beside the workspace.
func (l Layout) Private(chatID int64) string {
	return filepath.Join(l.data, privateDir, key(chatID))
}

// PrivateChats lists the chats that have a private folder.
func (l Layout) PrivateChats() ([]int64, error) {
	entries, err := os.ReadDir(filepath.Join(l.data, privateDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range entries {
		if id, ok := parseKey(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// WithPrivate lists where chats keep name in their private folders — and,
// in a data directory not migrated yet (Migrate), in their workspaces' old
// .volcanic/ folders.
func (l Layout) WithPrivate(name string) []string {
	matches, _ := filepath.Glob(filepath.Join(l.data, privateDir, "*", name))
	if !l.migrated() {
		old, _ := filepath.Glob(filepath.Join(l.data, chatsDir, "*", legacyDir, name))
		matches = append(matches, old...)
	}
	return matches
}
