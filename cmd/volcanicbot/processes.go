package main

import "github.com/volcanicbot/volcanicbot/internal/mcpclient"

// startProcesses makes this the one bot of its data directory and readies
// the MCP servers' processes: the data directory is locked (a second bot
// on it would fight this one over every chat's workspace and transcript,
// and end its servers as left by an earlier run), and what an earlier run
// left behind is ended.
func (m *Main) startProcesses() error {
	lock, err := lockDataDir(m.cfg.DataDir)
	if err != nil {
		return err
	}
	m.lock = lock
	if reaped := mcpclient.ReapOrphans(m.owner); len(reaped) > 0 {
		m.logger.Warn("ended processes left by an earlier run", "pids", reaped)
	}
	return nil
}
