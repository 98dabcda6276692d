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
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
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

// topicMark joins a chat's id and its topic's in a key: "<chat>_t<topic>".
const topicMark = "_t"

// key is a place's name in paths: the one place a chat becomes a path
// element. A chat without topics (and a forum's General topic) is its id,
// as before topics were conversations; a topic is its chat's id, "_t" and
// the topic's id — a sibling of its chat's folder, never inside it.
func key(p chat.Place) string {
	s := strconv.FormatInt(p.Chat, 10)
	if p.Topic != 0 {
		s += topicMark + strconv.Itoa(p.Topic)
	}
	return s
}

// Key is a place's name in paths, for the records kept under the data
// directory per place outside its two folders (the grants).
func Key(p chat.Place) string { return key(p) }

// parseKey is key's inverse; ok is false for a name no place has.
func parseKey(name string) (p chat.Place, ok bool) {
	id, topic, hasTopic := strings.Cut(name, topicMark)
	var err error
	if p.Chat, err = strconv.ParseInt(id, 10, 64); err != nil {
		return chat.Place{}, false
	}
	if hasTopic {
		if p.Topic, err = strconv.Atoi(topic); err != nil || p.Topic <= 0 {
			return chat.Place{}, false
		}
	}
	if key(p) != name {
		return chat.Place{}, false
	}
	return p, true
}

// Workspace is the place's workspace: what its servers see.
func (l Layout) Workspace(p chat.Place) string {
	return filepath.Join(l.data, chatsDir, key(p))
}

// Private is the bot's private folder of the place, beside the workspace.
func (l Layout) Private(p chat.Place) string {
	return filepath.Join(l.data, privateDir, key(p))
}

// PrivateChats lists the places (chats and topics) that have a private
// folder.
func (l Layout) PrivateChats() ([]chat.Place, error) {
	entries, err := os.ReadDir(filepath.Join(l.data, privateDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []chat.Place
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
