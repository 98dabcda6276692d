package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// approvalsDir holds the chats' "always in this chat" grants, one file a
// chat, under the data directory: outside the chat's workspace, which the
// agent's own servers may write to, so that it cannot approve itself.
const approvalsDir = "approvals"

// grantsPath is place's file of grants: each topic of a forum has its
// own, the General topic the chat's.
func (m *Manager) grantsPath(place chat.Place) string {
	return filepath.Join(m.o.DataDir, approvalsDir, chatdir.Key(place)+".json")
}

// Grant is an "Always in this chat" approval: every call of the server's
// tool in the chat runs without asking, until it is revoked (/approvals).
// It outlives /new and restarts.
type Grant struct {
	Server string    `json:"server"`
	Tool   string    `json:"tool"` // the server's own name of it
	By     int64     `json:"by,omitempty"`
	At     time.Time `json:"at"`
}

// Grants lists chat's "Always in this chat" approvals, in the order they
// were given. A missing file is none; an unreadable one is an error
// (a *GrantsError).
func (m *Manager) Grants(place chat.Place) ([]Grant, error) {
	list, err := readGrants(m.grantsPath(place))
	if err != nil {
		return nil, &GrantsError{Err: err}
	}
	return list, nil
}

// RevokeGrant takes back chat's "Always in this chat" of server's tool:
// its next call asks again. It reports whether there was one.
func (m *Manager) RevokeGrant(place chat.Place, server, tool string) (bool, error) {
	n, err := m.grants.revoke(m.grantsPath(place), func(g Grant) bool { return g.Server == server && g.Tool == tool })
	if err != nil {
		return false, &GrantsError{Err: err}
	}
	if n > 0 {
		m.logger.Info("\"always in this chat\" revoked", "chat", place, "server", server, "tool", tool)
	}
	return n > 0, nil
}

// RevokeGrants takes back every "Always in this chat" of chat and reports
// how many there were.
func (m *Manager) RevokeGrants(place chat.Place) (int, error) {
	n, err := m.grants.revoke(m.grantsPath(place), func(Grant) bool { return true })
	if err != nil {
		return 0, &GrantsError{Err: err}
	}
	if n > 0 {
		m.logger.Info("every \"always in this chat\" revoked", "chat", place, "grants", n)
	}
	return n, nil
}

// GrantsError is a chat's file of grants failing to be read or written
// (approvals/<chat id>.json): the operator's detail is Err; tell the user
// the approvals could not be read or changed, nothing more.
type GrantsError struct{ Err error }

func (e *GrantsError) Error() string { return "the chat's approvals: " + e.Err.Error() }
func (e *GrantsError) Unwrap() error { return e.Err }

// grants are the chats' grants, in their files. Every check reads the
// file (small, and read only for calls that would otherwise ask), so a
// revocation — or an operator's edit — holds from the next call on. mu
// orders the changes, each a read, a change and a store.WriteFile:
// the tool calls of every chat and /approvals make them concurrently. No
// other process writes them: the data directory's lock keeps a second bot
// out.
type grants struct {
	mu sync.Mutex
}

// grantsFile is the file's shape.
type grantsFile struct {
	Always []Grant `json:"always"`
}

// readGrants reads path: none when it is missing.
func readGrants(path string) ([]Grant, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f grantsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Always, nil
}

// has reports whether server's tool is granted in path; an unreadable
// file grants nothing, and is logged.
func (g *grants) has(path, server, tool string, log interface{ Warn(string, ...any) }) bool {
	list, err := readGrants(path)
	if err != nil {
		log.Warn("approvals of the chat not read: the call asks", "err", err)
		return false
	}
	return slices.ContainsFunc(list, func(x Grant) bool { return x.Server == server && x.Tool == tool })
}

// add grants server's tool in path's chat. A file it cannot read is left
// as it is (the operator may mend it), and the grant not saved.
func (g *grants) add(path, server, tool string, by int64, at time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(path)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(list, func(x Grant) bool { return x.Server == server && x.Tool == tool }) {
		return nil
	}
	return writeGrants(path, append(list, Grant{Server: server, Tool: tool, By: by, At: at.UTC()}))
}

// revoke removes path's grants that match and returns how many; the file
// goes with the last one.
func (g *grants) revoke(path string, match func(Grant) bool) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	list, err := readGrants(path)
	if err != nil {
		return 0, err
	}
	kept := slices.DeleteFunc(slices.Clone(list), match)
	n := len(list) - len(kept)
	if n == 0 {
		return 0, nil
	}
	if len(kept) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		return n, nil
	}
	return n, writeGrants(path, kept)
}

func writeGrants(path string, list []Grant) error {
	data, err := json.MarshalIndent(grantsFile{list}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// writeFileAtomic replaces path with data through store.WriteFile (0600,
// written beside it — renameio.WriteFile put it in $TMPDIR when that was
// on the same file system —, synced, renamed, the folder synced), making
// the folder (0700) when missing.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return store.WriteFile(path, data, nil)
}
