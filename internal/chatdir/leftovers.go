package chatdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// legacyState are the names a version from before the private folders
// wrote into <workspace>/.volcanic/: the conversation and the browser's
// logins, what a chat's tools must not read.
var legacyState = []string{"transcript.jsonl", "browser-state.json", "browser-profile"}

// Leftovers are the workspaces' .volcanic/ folders that hold the bot's
// state again after the migration: a version from before it ran on this
// data directory (a rollback) and kept a chat's conversation and logins
// there, where the chat's tools can read them. Nothing is moved: after
// the migration a workspace's .volcanic/ may as well be a tool's (see
// Migrate), so the start only says where they are. A .volcanic that is
// not a real folder, or holds none of those names, is not reported. One
// Lstat per chat, more only for a chat that has a .volcanic folder.
func (l Layout) Leftovers() ([]string, error) {
	if !l.migrated() {
		return nil, nil
	}
	entries, err := os.ReadDir(filepath.Join(l.data, chatsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for a rollback's state in the workspaces: %w", err)
	}
	var found []string
	for _, e := range entries {
		id, ok := parseKey(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(l.Workspace(id), legacyDir)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		for _, name := range legacyState {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				found = append(found, dir)
				break
			}
		}
	}
	return found, nil
}
