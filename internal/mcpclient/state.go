package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// A chat's state on a server with StateTools (the shared browser's cookies
// and local storage) is kept in the chat's private folder, which no server
// can reach. The server reads and writes files only in the chat's
// workspace, so each save and restore goes through a file there that
// lives for one state call: an unpredictable name, made by the bot for a
// restore (exclusively, no symlink followed), left to the server for a
// save and taken out at once (a regular file with one name, no symlink,
// bounded), then removed. The chat's own calls on the connection wait
// meanwhile (stateGate), so none of them can read or replace it.

// stateTimeout bounds a save or a restore of a chat's state, the wait for
// the chat's calls to pause included; stateSaveEvery is how often at most
// the state is saved when the chat's calls pause, besides before every
// stop.
const (
	stateTimeout   = 10 * time.Second
	stateSaveEvery = time.Minute
)

// maxStateBytes bounds a saved state: a larger one is refused (the last
// good one stays).
const maxStateBytes = 32 << 20

// stateTempPrefix starts the names of the state's files in the workspace.
const stateTempPrefix = ".volcanicbot-state-"

// stateGateAll is the whole of a server's state gate: the chat's calls
// take one each, a save or a restore all of it.
const stateGateAll = 1 << 30

// newStateGate is the gate of a live server of a connection with
// StateTools (a semaphore: FIFO, so that a save waiting for the calls in
// flight holds back the calls that come after it).
func newStateGate() *semaphore.Weighted { return semaphore.NewWeighted(stateGateAll) }

// beforeStateCall keeps the chat's state across a Close call: the state is
// saved before it, and restored before the call after it (the server opens
// its next context then). It returns, with the call's share of the state
// gate taken (the caller releases it when the call returns), how many
// contexts the server has opened for the connection so far; an error only
// when ctx ended.
func (c *connection) beforeStateCall(ctx context.Context, srv *liveServer, tool Tool) (int32, error) {
	if srv.restoreFirst.CompareAndSwap(true, false) {
		c.restoreState(ctx, srv)
	}
	if tool.MCPName == c.cfg.State.Close {
		c.saveState(srv)
	}
	if err := srv.stateGate.Acquire(ctx, 1); err != nil {
		return 0, err
	}
	return srv.contexts(), nil
}

// freshContext reports whether the server opened a new context for the
// call unasked — its browser died since the last call, and the call ran in
// a fresh one without the chat's state: the state is restored at once (the
// call's result says so). After a Close call the next call restores first.
func (c *connection) freshContext(ctx context.Context, srv *liveServer, tool Tool, before int32) bool {
	if tool.MCPName == c.cfg.State.Close {
		srv.restoreFirst.Store(true)
		return false
	}
	if before == 0 || srv.contexts() == before {
		return false
	}
	c.deps.sp.logger.Warn("MCP server opened a new context for the chat (its browser stopped): the chat's state is restored",
		"server", c.cfg.Name, "workspace", c.workspace)
	c.restoreState(ctx, srv)
	return true
}

// adoptContext makes the context the chat's last call ran in its own,
// when it had no state saved to restore into it.
func adoptContext(srv *liveServer) {
	if n := srv.contexts(); n > 0 && srv.adopt.CompareAndSwap(true, false) {
		srv.ownContext.Store(n)
	}
}

// saveStateIfIdle is the save when the chat's calls pause: made only if
// no call of the chat runs or waits (a save waiting for a long call would
// hold back the chat's next calls); otherwise the next pause saves.
func (c *connection) saveStateIfIdle(srv *liveServer) {
	if c.private == "" {
		return
	}
	if !srv.stateGate.TryAcquire(stateGateAll) {
		c.saveLater()
		return
	}
	defer srv.stateGate.Release(stateGateAll)
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	c.saveHeld(ctx, srv)
}

// saveState calls the State's Save tool (before srv stops, before a Close
// call) and puts what it wrote in the chat's private folder, once the
// chat's calls in flight have ended.
func (c *connection) saveState(srv *liveServer) {
	if c.private == "" {
		return // a session that keeps no state (check)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	if err := srv.stateGate.Acquire(ctx, stateGateAll); err != nil {
		c.stateFailed("saved", errors.New("the chat's calls did not pause within "+fmtSeconds(stateTimeout)))
		return
	}
	defer srv.stateGate.Release(stateGateAll)
	c.saveHeld(ctx, srv)
}

// saveHeld saves with the state gate held whole. Only the chat's own
// context is saved: not one the server opened since without the chat's
// state (its browser had died, and the save would find it empty), nor one
// the save itself would open.
func (c *connection) saveHeld(ctx context.Context, srv *liveServer) {
	if srv.restoreFirst.Load() {
		// The chat closed its browser (the Close tool), its state saved
		// just before, and no call ran since: there is nothing to save,
		// and a save would open an empty context only to throw it away.
		c.deps.sp.logger.Debug("MCP server: nothing to save: the chat closed its browser, the state saved before the close is kept",
			"server", c.cfg.Name, "workspace", c.workspace)
		return
	}
	before := srv.contexts()
	if srv.countsContexts() && (before == 0 || before != srv.ownContext.Load()) {
		if before != 0 {
			c.deps.sp.logger.Info("MCP server: the chat's state not saved: the browser's context is not the one it was restored into "+
				"(the browser stopped since); the state saved before is kept", "server", c.cfg.Name, "workspace", c.workspace)
		}
		return
	}
	name, err := stateTempName()
	if err != nil {
		c.stateFailed("saved", err)
		return
	}
	tmp := filepath.Join(c.workspace, name)
	if _, err := os.Lstat(tmp); !errors.Is(err, fs.ErrNotExist) {
		c.stateFailed("saved", fmt.Errorf("%s is taken", tmp))
		return
	}
	defer c.removeTemp(tmp)
	args, _ := json.Marshal(map[string]string{"filename": name})
	if err := c.stateCall(ctx, srv, c.cfg.State.Save, args); err != nil {
		c.stateFailed("saved", err)
		return
	}
	if srv.contexts() != before {
		c.stateFailed("saved", errors.New("the browser had stopped: the save ran in a new, empty context; the state saved before is kept"))
		return
	}
	b, err := readStateFile(tmp)
	if err == nil {
		err = c.validState(b)
	}
	if err == nil {
		err = c.keepState(b)
	}
	if err != nil {
		c.stateFailed("saved", err)
		return
	}
	c.deps.sp.logger.Debug("MCP server: the chat's state saved", "server", c.cfg.Name, "workspace", c.workspace, "bytes", len(b))
}

// validState checks a state before it is kept or restored: the State's
// Valid, or at least JSON. A file cut short (a full disk) is neither.
func (c *connection) validState(b []byte) error {
	if c.cfg.State.Valid != nil {
		if err := c.cfg.State.Valid(b); err != nil {
			return fmt.Errorf("not a state (%d bytes: cut short?): %w", len(b), err)
		}
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("not a state (%d bytes, not JSON: cut short?)", len(b))
	}
	return nil
}

// keepState replaces the chat's saved state with b, atomically: written
// beside it, synced, renamed over it, 0600 (it holds the chat's logins),
// with the private folder's owner.
func (c *connection) keepState(b []byte) error {
	if err := os.MkdirAll(c.private, 0o700); err != nil {
		return err
	}
	own, err := store.OwnerOf(c.private)
	if err != nil {
		return err
	}
	return store.WriteFile(filepath.Join(c.private, c.cfg.State.File), b, own)
}

// restoreState calls the State's Restore tool on srv when the chat has a
// saved state, with a copy of it in the workspace for the call: the
// context it restored into is then the chat's own (saveState).
func (c *connection) restoreState(ctx context.Context, srv *liveServer) {
	if c.private == "" {
		return
	}
	c.removeStaleTemps()
	path := filepath.Join(c.private, c.cfg.State.File)
	b, err := readStateFile(path)
	if err == nil {
		if verr := c.validState(b); verr != nil {
			// What a version before this one left when its save was cut
			// short: kept aside, and the chat starts with nothing saved.
			c.stateFailed("restored", fmt.Errorf("%s: %w; kept as %s", path, verr, filepath.Base(path)+".invalid"))
			if err := os.Rename(path, path+".invalid"); err != nil {
				c.stateFailed("restored", err)
				return
			}
			srv.adopt.Store(true)
			return
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		srv.adopt.Store(true) // nothing saved yet: the chat's next context is its own
		return
	}
	if err != nil {
		c.stateFailed("restored", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	if err := srv.stateGate.Acquire(ctx, stateGateAll); err != nil {
		c.stateFailed("restored", errors.New("the chat's calls did not pause"))
		return
	}
	defer srv.stateGate.Release(stateGateAll)
	name, err := stateTempName()
	if err != nil {
		c.stateFailed("restored", err)
		return
	}
	tmp := filepath.Join(c.workspace, name)
	defer c.removeTemp(tmp)
	if err := writeNewFile(tmp, b); err != nil {
		c.stateFailed("restored", err)
		return
	}
	args, _ := json.Marshal(map[string]string{"filename": name})
	if err := c.stateCall(ctx, srv, c.cfg.State.Restore, args); err != nil {
		c.stateFailed("restored", err) // its context is not the chat's: not saved over the state
		return
	}
	srv.ownContext.Store(srv.contexts())
	c.deps.sp.logger.Debug("MCP server: the chat's state restored", "server", c.cfg.Name, "workspace", c.workspace, "bytes", len(b))
}

// stateCall calls tool under ctx and the state's deadline.
func (c *connection) stateCall(ctx context.Context, srv *liveServer, tool string, args json.RawMessage) error {
	raw, err := srv.rpc.callTool(ctx, tool, args, nil, time.Now().Add(stateTimeout))
	if err != nil {
		return err
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(raw, &res) == nil && res.IsError {
		return fmt.Errorf("%s answered an error: %s", tool, chat.CapText(string(raw), 1<<10))
	}
	return nil
}

// stateFailed logs that the chat's state was not saved or restored.
func (c *connection) stateFailed(done string, err error) {
	c.deps.sp.logger.Warn("MCP server: the chat's state was not "+done, "server", c.cfg.Name, "workspace", c.workspace,
		"err", c.redact(err.Error()))
}

// removeTemp removes a state file of the workspace.
func (c *connection) removeTemp(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.deps.sp.logger.Warn("MCP server: a copy of the chat's state stays in its workspace", "server", c.cfg.Name, "path", path,
			"err", err.Error())
	}
}

// removeStaleTemps removes the state files a killed bot left in the
// workspace.
func (c *connection) removeStaleTemps() {
	stale, _ := filepath.Glob(filepath.Join(c.workspace, stateTempPrefix+"*.json"))
	for _, path := range stale {
		c.removeTemp(path)
	}
}

// stateTempName is a fresh name for a state file in the workspace: no
// tool of the chat can guess it.
func stateTempName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return stateTempPrefix + hex.EncodeToString(b[:]) + ".json", nil
}

// writeNewFile creates path, which must not exist (no symlink followed),
// 0600, with b.
func writeNewFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readStateFile reads a state file: a regular file with one name, reached
// by no symlink at its last step, of at most maxStateBytes.
func readStateFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink", path)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) != 1 {
		return nil, fmt.Errorf("%s has other names (%d hard links)", path, st.Nlink)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxStateBytes {
		return nil, fmt.Errorf("%s is over %d MB", path, maxStateBytes>>20)
	}
	return b, nil
}
