package mcpclient

import (
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// A bot (or a check) starting beside a running one must not end the
// running one's servers: only a dead bot's processes are orphans.
func TestReapOrphansSparesALiveBot(t *testing.T) {
	owner := "test-" + t.Name() + "-" + time.Now().Format("150405.000000")
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeGrandchild)
	h := newHarness(t, nil, cfg)
	h.client.sp.owner = owner
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"x"}`)
	st, _ := s.Status("fake")
	var grand int
	for _, ev := range fakemcp.WaitForEvents(t, logPath, fakemcp.EventGrandchild, 2, 5*time.Second) {
		if ev.Parent == st.PID {
			grand = ev.PID
		}
	}
	if grand == 0 {
		t.Fatal("no grandchild")
	}
	if marked := MarkedProcesses(owner); len(marked) < 2 {
		t.Fatalf("marked processes %v, want the server %d and its grandchild %d", marked, st.PID, grand)
	}
	if killed := ReapOrphans(owner); len(killed) != 0 {
		t.Errorf("reaped %v: the processes of a live bot", killed)
	}
	if !fakemcp.Alive(st.PID) || !fakemcp.Alive(grand) {
		t.Error("a live bot's server or its grandchild was killed")
	}
	if res := h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"still here"}`); res.IsError {
		t.Errorf("the server after the reap: %+v", res)
	}
}
