package main

import (
	"fmt"
	"path/filepath"
)

// processesDir is where, under the data directory, the bot keeps the
// record of its MCP servers' process trees (in the subreaper mode), for the
// next start after a SIGKILL.
const processesDir = ".volcanic/processes"

// startProcesses makes this the one bot of its data directory and readies
// the MCP servers' processes: the data directory is locked (a second bot
// on it would fight this one over every chat's workspace and transcript,
// and end its servers as left by an earlier run), the tracking of the
// servers' trees is set up, and what an earlier run left behind is ended.
func (m *Main) startProcesses() error {
	lock, err := lockDataDir(m.cfg.DataDir)
	if err != nil {
		return err
	}
	m.lock = lock
	mode, err := m.tracker.Open(m.Tracking, filepath.Join(m.cfg.DataDir, processesDir))
	if err != nil {
		return fmt.Errorf("MCP server processes: %w", err)
	}
	m.logger.Info("MCP server processes tracked by "+mode.String(), "mode", mode.String())
	if reaped := m.tracker.ReapOrphans(); len(reaped) > 0 {
		m.logger.Warn("ended processes left by an earlier run", "pids", reaped)
	}
	return nil
}
