package mcpclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// trackingModes are the tracking modes this machine offers: cgroup when
// the process may create cgroups, and subreaper.
func trackingModes(t *testing.T) []TrackMode {
	t.Helper()
	probe := NewTracker(TrackerOptions{Owner: "probe"})
	defer probe.Close()
	if _, err := probe.Open(TrackCgroup, ""); err != nil {
		t.Logf("cgroup mode not available here: %v", err)
		return []TrackMode{TrackSubreaper}
	}
	return []TrackMode{TrackCgroup, TrackSubreaper}
}

// escapers are the modes of servers whose descendants leave their process
// group, each logging the escaper's pid.
var escapers = [][]string{
	{fakemcp.ModeDaemon},
	{fakemcp.ModeDaemon, fakemcp.ModeClearEnv},
	{fakemcp.ModeSetsidOnSIGTERM, fakemcp.ModeClearEnv},
}

func escaperServers(t *testing.T) ([]mcpconfig.ServerConfig, []string) {
	var cfgs []mcpconfig.ServerConfig
	var logs []string
	for i, modes := range escapers {
		cfg, log := fakeServer(t, "fake"+string(rune('a'+i)), modes...)
		cfgs, logs = append(cfgs, cfg), append(logs, log)
	}
	return cfgs, logs
}

// escaperPIDs waits for n escapers in each log.
func escaperPIDs(t *testing.T, logs []string, n int) []int {
	t.Helper()
	var pids []int
	for i, log := range logs {
		event := fakemcp.EventDaemon
		if strings.Contains(strings.Join(escapers[i], ","), fakemcp.ModeSetsidOnSIGTERM) {
			event = fakemcp.EventGrandchild
		}
		pids = append(pids, fakemcp.Escapers(fakemcp.WaitForEvents(t, log, event, n, 10*time.Second))...)
	}
	return pids
}

// A discovery (at start, and every check) and a session's close (/new,
// /mcp restart) leave no descendant of the servers behind, in each mode.
func TestDiscoveryAndSessionCloseEndEscapers(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			cfgs, logs := escaperServers(t)
			h := newHarness(t, nil, cfgs...)
			tr := NewTracker(TrackerOptions{Owner: "test-tree", ScanInterval: time.Hour})
			if _, err := tr.Open(mode, ""); err != nil {
				t.Fatal(err)
			}
			h.client.sp.tracker = tr
			h.client.sp.owner = "test-tree"
			t.Cleanup(tr.Close)

			for _, sc := range h.client.Discover(context.Background()) {
				if sc.Err != nil {
					t.Fatalf("discover %s: %v", sc.Config.Name, sc.Err)
				}
			}
			fakemcp.WaitDead(t, 10*time.Second, escaperPIDs(t, logs, 1)...)

			s := h.session("")
			for _, cfg := range cfgs {
				if res := h.call(s, h.tool(cfg.Name, fakemcp.ToolEcho), `{"text":"x"}`); res.IsError {
					t.Fatalf("%s: %+v", cfg.Name, res)
				}
			}
			pids := escaperPIDs(t, logs, 2)
			s.Close()
			fakemcp.WaitDead(t, 10*time.Second, pids...)
		})
	}
}
