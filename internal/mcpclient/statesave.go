package mcpclient

import "time"

// saveSchedule is when a connection saves the chat's state (State) while
// its process runs: once the chat's calls pause after one that may have
// changed it, at most every stateSaveEvery, so that a crash (the OOM
// killer, a SIGKILL of the bot) loses little. Its fields are guarded by
// the connection's mu.
type saveSchedule struct {
	at    time.Time   // the last save
	dirty bool        // a call ended since
	timer *time.Timer // the save that waits for stateSaveEvery
}

// stateDirtyLocked notes that a call changed what the chat's state may
// hold; once its calls pause it is saved (the save waits for the rest of
// stateSaveEvery). c.mu must be held.
func (c *connection) stateDirtyLocked(srv *liveServer) {
	c.saves.dirty = true
	if c.inflight > 0 || c.saves.timer != nil {
		return
	}
	wait := stateSaveEvery - time.Since(c.saves.at)
	if wait <= 0 {
		c.saveDueLocked(srv)
		return
	}
	c.saves.timer = time.AfterFunc(wait, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.saves.timer = nil
		if c.srv == srv && c.inflight == 0 && c.saves.dirty {
			c.saveDueLocked(srv)
		}
	})
}

// saveDueLocked saves the chat's state in the background. c.mu must be
// held.
func (c *connection) saveDueLocked(srv *liveServer) {
	c.saves.dirty, c.saves.at = false, time.Now()
	c.goLocked(func() { c.saveStateIfIdle(srv) })
}

// saveLater notes that a save could not be made now (the chat's calls
// hold the state): the next pause saves.
func (c *connection) saveLater() {
	c.mu.Lock()
	c.saves.dirty = true
	c.mu.Unlock()
}
