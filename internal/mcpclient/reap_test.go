package mcpclient

import (
	"slices"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// A bot killed with SIGKILL leaves its servers' descendants behind; the next
// start finds them by the owner mark and ends them.
func TestReapOrphans(t *testing.T) {
	owner := "test-" + t.Name() + "-" + time.Now().Format("150405.000000")
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeGrandchild)
	h := newHarness(t, nil, cfg)
	h.client.owner = owner
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
	// The catalogue's discovery process is gone already; the session's
	// server and its grandchild carry the mark.
	killed := ReapOrphans(owner)
	if !slices.Contains(killed, st.PID) || !slices.Contains(killed, grand) {
		t.Errorf("reaped %v, want %d and %d", killed, st.PID, grand)
	}
	waitFor(t, "the reaped processes to end", 5*time.Second, func() bool {
		return !fakemcp.Alive(st.PID) && !fakemcp.Alive(grand)
	})
	if again := ReapOrphans(owner); len(again) != 0 {
		t.Errorf("second reap killed %v", again)
	}
	if got := ReapOrphans("someone-else"); len(got) != 0 {
		t.Errorf("another owner's reap killed %v", got)
	}
}
