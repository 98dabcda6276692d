package main

import (
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// hostileModes make the fake leave five kinds of escaping descendant at
// start, none with the mark and none ending on SIGTERM: a grandchild in
// its group, one that calls setsid() on SIGTERM, a double-forked daemon,
// a dodger (a cgroup of its own below the server's where it may, a new pid
// every 100 ms) and an escaper (out of every cgroup of the bot's where it
// may: root; a session of its own, reparented).
var hostileModes = []string{fakemcp.ModeGrandchild, fakemcp.ModeSetsidOnSIGTERM, fakemcp.ModeDaemon, fakemcp.ModeDodge,
	fakemcp.ModeEscape, fakemcp.ModeClearEnv, fakemcp.ModeStubborn}

// waitHostile waits until the log names n starts' escapers, and in the
// cgroup mode checks that the last escaper really left every cgroup of
// the bot's (else the test proves nothing of that mode).
func waitHostile(t *testing.T, d *daemon, n int) {
	t.Helper()
	fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventGrandchild, 2*n, 20*time.Second)
	fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventDaemon, n, 20*time.Second)
	fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventDodge, n, 20*time.Second)
	escapes := fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventEscape, n, 20*time.Second)
	if strings.Contains(d.logs.String(), "tracked by cgroup") && escapes[n-1].Reason != "/" {
		t.Fatalf("the escaper stayed in its cgroup (%s): nothing to test", escapes[n-1].Reason)
	}
}

// The escaping descendants of a server end with the process that left
// them: the discovery at start, the discovery after a restart, a chat's
// server at /mcp restart, /new and the shutdown — in the mode this machine
// gives the bot (the cgroup mode, as root), and in the subreaper mode. In
// the cgroup mode the dodger and the escaper outlived the discovery for
// good.
func TestE2EHostileEscapersEndWithTheirServer(t *testing.T) {
	for _, mode := range []mcpclient.TrackMode{mcpclient.TrackAuto, mcpclient.TrackSubreaper} {
		t.Run(mode.String(), func(t *testing.T) {
			o := daemonOptions{dataDir: t.TempDir(), modes: hostileModes, main: func(m *Main) { m.Tracking = mode }}

			// The discovery at start.
			d := startDaemon(t, echoThenAnswer, o)
			t.Cleanup(func() { fakemcp.KillSurvivors(d.mcpLog) })
			d.waitLog("MCP catalogue ready")
			waitHostile(t, d, 1)
			fakemcp.WaitNoSurvivors(t, 10*time.Second, d.mcpLog)

			// A chat's server: /mcp restart, /new, the shutdown.
			for i, step := range []struct{ command, answer string }{
				{"/mcp restart fake", "restarted"},
				{"/new", "New conversation"},
				{"", ""},
			} {
				text := "call " + string(rune('a'+i))
				d.tg.Message(alice, alice, text)
				d.waitText(alice, "the tool said: "+text)
				waitHostile(t, d, i+2)
				if step.command == "" {
					d.stop()
				} else {
					d.tg.Message(alice, alice, step.command)
					d.waitText(alice, step.answer)
				}
				fakemcp.WaitNoSurvivors(t, 10*time.Second, d.mcpLog)
			}

			// The discovery after a restart on the same data directory.
			d = startDaemon(t, echoThenAnswer, o)
			t.Cleanup(func() { fakemcp.KillSurvivors(d.mcpLog) })
			d.waitLog("MCP catalogue ready")
			waitHostile(t, d, 1)
			fakemcp.WaitNoSurvivors(t, 10*time.Second, d.mcpLog)
		})
	}
}
