package chatdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// legacyDir is the folder under each workspace where versions before the
// private folders kept the bot's state of the chat (where the browser and
// every other server could read and write it).
const legacyDir = ".volcanic"

// migratedMark, in the private folders' parent, says the data directory
// was migrated: from then on a .volcanic/ in a workspace is the chat's
// own (a tool may make one), never moved into the private folder nor
// taken for the bot's.
const migratedMark = ".migrated"

// Migration is what Migrate did.
type Migration struct {
	// Chats whose old .volcanic/ folder was moved (or finished moving).
	Chats int
	// Kept are entries that met one of the same name in the private
	// folder (a newer version ran, then an older one, then this): each
	// was moved in beside it under another name, nothing replaced.
	Kept []string
	// Skipped are .volcanic entries of workspaces that are not folders (a
	// symlink a tool made): not the bot's, left where they are.
	Skipped []string
}

// Migrate moves every chat's private state from <workspace>/.volcanic/
// into the chat's private folder, entry by entry, each with one rename
// (the transcript and its archives, images/, the turn mark, the browser
// state, browser-profile/ whole), then removes the emptied folder. It
// never replaces anything: an entry the private folder holds already
// stays, and the one from the workspace moves in beside it with a
// ".from-workspace-<time>" suffix.
//
// A start killed in the middle loses nothing: every entry is in one place
// or the other, and the next Migrate moves the rest. Once every chat is
// moved Migrate leaves a mark, and from then on does nothing: what a
// chat's tools put in a workspace's .volcanic/ afterwards is never taken
// into the private folder. own gives a folder it makes the
// data directory's owner (store.OwnerOf). The private folders and the data
// directory must be on one file system (a rename): across two, Migrate
// stops with an error that says what to move by hand, having moved
// nothing of that entry. Run it before any session starts, with the data
// directory locked.
func (l Layout) Migrate(own func(path string) error) (Migration, error) {
	var m Migration
	if l.migrated() {
		return m, nil
	}
	entries, err := os.ReadDir(filepath.Join(l.data, chatsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("migrate the chats' private state: %w", err)
	}
	for _, e := range entries {
		id, ok := parseKey(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		old := filepath.Join(l.Workspace(id), legacyDir)
		fi, err := os.Lstat(old)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return m, fmt.Errorf("migrate the private state of chat %d: %w", id, err)
		case !fi.IsDir():
			m.Skipped = append(m.Skipped, old)
			continue
		}
		kept, err := l.migrateChat(id, old, own)
		m.Kept = append(m.Kept, kept...)
		if err != nil {
			return m, fmt.Errorf("migrate the private state of chat %d: %w", id, err)
		}
		m.Chats++
	}
	if err := l.markMigrated(own); err != nil {
		return m, fmt.Errorf("migrate the chats' private state: %w", err)
	}
	return m, nil
}

func (l Layout) markPath() string { return filepath.Join(l.data, privateDir, migratedMark) }

// migrated reports whether Migrate finished on this data directory.
func (l Layout) migrated() bool {
	_, err := os.Lstat(l.markPath())
	return err == nil
}

// markMigrated leaves the mark, durably.
func (l Layout) markMigrated(own func(string) error) error {
	if err := os.MkdirAll(l.data, 0o700); err != nil {
		return err
	}
	if err := mkdirOwned(filepath.Join(l.data, privateDir), own); err != nil {
		return err
	}
	return store.WriteFile(l.markPath(),
		[]byte("The chats' private state was moved here from chats/<id>/.volcanic/; nothing is taken from there again.\n"), own)
}

// migrateChat moves the entries of old, a chat's .volcanic/ folder, into
// its private folder and removes old.
func (l Layout) migrateChat(id chat.Place, old string, own func(string) error) (kept []string, err error) {
	priv := l.Private(id)
	if err := mkdirOwned(filepath.Dir(priv), own); err != nil {
		return nil, err
	}
	if err := mkdirOwned(priv, own); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(old)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		src, dst := filepath.Join(old, e.Name()), filepath.Join(priv, e.Name())
		if _, err := os.Lstat(dst); err == nil {
			dst += ".from-workspace-" + time.Now().UTC().Format("20060102T150405.000000000Z")
			kept = append(kept, dst)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return kept, err
		}
		if err := os.Rename(src, dst); err != nil {
			if errors.Is(err, syscall.EXDEV) {
				return kept, fmt.Errorf("%s and %s are on different file systems: move %s into %s by hand (the bot moves with a rename): %w",
					filepath.Dir(old), priv, old+string(filepath.Separator), priv, err)
			}
			return kept, err
		}
	}
	// The renames reach the disk before the folder they left goes.
	if err := store.SyncDir(priv); err != nil {
		return kept, err
	}
	if err := os.Remove(old); err != nil {
		return kept, err
	}
	return kept, store.SyncDir(filepath.Dir(old))
}

// mkdirOwned makes dir (0700) unless it exists, and gives it own's owner
// (again, if it exists: a start killed between the two).
func mkdirOwned(dir string, own func(string) error) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return own(dir)
}
