package session

import (
	"fmt"
	"time"
)

// The disk watcher: one goroutine of the manager that, every
// DiskCheckEvery, looks at the chats with a live server process — the
// only ones whose files can grow while no turn runs — and
//   - keeps their generated files within their budget (once the chat's
//     conversation was read, so that its images are known);
//   - stops a runaway writer: a server log (the browser's console log of a
//     page that floods its console) that grew by at least runawayMin, at
//     runawayRate or faster, over a whole interval in which none of the
//     chat's calls to that server was in flight. The first time the log is
//     emptied (the server goes on appending to it); if it grows so again
//     (within strikeMemory, with no call of the chat to the server in
//     between), and no turn of the chat is running, the chat's process of
//     that server is stopped as an idle stop does (the chat's state saved
//     first: a shared browser's cookies and storage; a per-chat browser
//     keeps its profile), what it wrote meanwhile emptied too, and the chat
//     is told. While a turn runs the log is emptied at every such check
//     instead: the turn holds its browser, and its next call may need the
//     page.
//
// A measure that finds nothing new costs a stat of each folder and of each
// log (see package disk), so the watcher costs little however big the
// chats' folders are.

// Runaway thresholds: a page left open (no call in flight) writes a few
// lines of console now and then, kilobytes a minute; the page of issue 18
// wrote 7 MB a second. A log that grows 512 KB a second, and 1 MB at
// least, between two checks is a runaway. A flood that the machine's load
// slows below the rate for a check or two is still one: its strikes are
// forgotten only after strikeMemory without one, or when the chat calls
// the server.
const (
	runawayRate  = 512 << 10 // bytes a second
	runawayMin   = 1 << 20
	strikeMemory = time.Minute
)

// diskWatch is the watcher's memory of one chat; only the watcher's
// goroutine touches it.
type diskWatch struct {
	watching bool      // the chat had a live server at the last check
	last     time.Time // of the last check
	strikes  map[string]strikes
}

// strikes count a server's runaway checks since the chat last called it.
type strikes struct {
	n    int
	last time.Time
}

// startWatchLocked starts the disk watcher with the first session. m.mu is
// held and the manager is not closed: Close's Wait sees the goroutine.
func (m *Manager) startWatchLocked() {
	if m.watching {
		return
	}
	m.watching = true
	m.wg.Add(1)
	go m.watchDisk()
}

func (m *Manager) watchDisk() {
	defer m.wg.Done()
	tick := time.NewTicker(m.o.DiskCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		m.mu.Lock()
		sessions := make([]*session, 0, len(m.sessions))
		for _, s := range m.sessions {
			sessions = append(sessions, s)
		}
		m.mu.Unlock()
		for _, s := range sessions {
			if m.ctx.Err() != nil {
				return
			}
			s.checkDisk(time.Now())
		}
	}
}

// startedMCP is the chat's MCP session if it has one (none is made).
func (s *session) startedMCP() MCPSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil {
		return nil
	}
	return s.mcp
}

// turnRunning reports whether a turn of the chat runs.
func (s *session) turnRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn != nil
}

// checkDisk is one check of the chat by the watcher.
func (s *session) checkDisk(now time.Time) {
	ms := s.startedMCP()
	w := &s.watch
	var running []string
	if ms != nil {
		running = ms.Running()
	}
	if len(running) == 0 {
		if w.watching {
			s.disk.Forget() // nothing grows now: the next measure lists afresh
			*w = diskWatch{}
		}
		return
	}
	grown := s.disk.Growth() // the first one sets the baseline
	if !w.watching {
		*w = diskWatch{watching: true, last: now, strikes: map[string]strikes{}}
		return
	}
	since, elapsed := w.last, now.Sub(w.last)
	w.last = now
	for _, name := range running {
		if !ms.IdleSince(name, since) { // the chat uses it
			delete(w.strikes, name)
			continue
		}
		if g := grown[name]; g >= runawayMin && float64(g) >= runawayRate*elapsed.Seconds() {
			s.runaway(ms, name, g, elapsed, now)
		}
	}
	if s.diskReady.Load() {
		s.logPrune(s.disk.Enforce())
	}
}

// runaway deals with server's log growing by grown over elapsed with no
// call in flight: see the top of the file.
func (s *session) runaway(ms MCPSession, server string, grown int64, elapsed time.Duration, now time.Time) {
	m := s.m
	w := &s.watch
	st := w.strikes[server]
	if now.Sub(st.last) > strikeMemory {
		st.n = 0
	}
	st.n++
	st.last = now
	w.strikes[server] = st
	files, freed := s.disk.CutLogs(server)
	attrs := []any{"chat", s.id, "server", server, "grown_bytes", grown, "seconds", elapsed.Seconds(), "emptied_files", files, "freed_bytes", freed}
	if st.n < 2 || s.turnRunning() {
		m.logger.Warn("a log of the chat's server grows with no call in flight: emptied", attrs...)
		return
	}
	why := fmt.Sprintf("its log grew %s in %.0f s with no call in flight", byteSize64(grown), elapsed.Seconds())
	if !ms.StopIdle(server, why) {
		return // a call came meanwhile: the next check looks again
	}
	delete(w.strikes, server)
	// What it wrote while it was being stopped (its state saved first).
	s.disk.Growth()
	_, more := s.disk.CutLogs(server)
	attrs = append(attrs, "freed_after_stop_bytes", more)
	m.logger.Warn("a log of the chat's server kept growing with no call in flight: the chat's process of it was stopped", attrs...)
	s.reply(m.ctx, runawayReply(s.m.processNoun(server), grown, elapsed))
}

// runawayReply is what the chat reads when its process of a server was
// stopped for writing without end.
func runawayReply(noun string, grown int64, elapsed time.Duration) string {
	what := fmt.Sprintf("%s in %.0f s", byteSize64(grown), elapsed.Seconds())
	if noun == "browser" {
		return "I closed this chat's browser: a page kept writing its console log to disk (" + what + ") while no tool was running. " +
			"Its cookies and storage were saved; ask me to open the page again if you need it."
	}
	return "I stopped this chat's " + noun + ": it kept writing its log to disk (" + what + ") while no tool was running. " +
		"It starts again at the next call."
}

// processNoun is what one of server's processes is to the user.
func (m *Manager) processNoun(server string) string {
	if cfg, ok := m.o.MCP.Server(server); ok && cfg.ProcessNoun != "" {
		return cfg.ProcessNoun
	}
	return server + " process" // the documented default (mcpconfig.ServerConfig.ProcessNoun)
}
