package mcpclient

import (
	"context"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A server named in another client's spelling (Cline's marketplace name)
// is shown under that name in /mcp, and /mcp <name> and /mcp restart <name>
// take the original and the internal name alike.
func TestServerNamedInAnotherClientsSpelling(t *testing.T) {
	const label = "github.com/upstash/context7-mcp"
	cfg, _ := fakeServer(t, mcpconfig.SafeServerName(label))
	cfg.Label = label
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.client.Discover(context.Background())
	if got := statusOf(t, s, cfg.Name); got.Display != label || got.State != chat.ServerNotStarted {
		t.Errorf("/mcp does not show the name as written: %+v", got)
	}
	for _, name := range []string{label, cfg.Name} {
		detail := detailOf(t, s, name)
		if detail.Display != label || detail.Label != label || detail.Name != cfg.Name {
			t.Errorf("/mcp %s: %+v", name, detail)
		}
	}
	echo := h.tool(label, fakemcp.ToolEcho)
	for i, name := range []string{label, cfg.Name} {
		h.call(s, echo, `{"text":"x"}`)
		if err := s.Restart(name); err != nil {
			t.Fatalf("/mcp restart %s: %v", name, err)
		}
		testkit.WaitFor(t, "the process stopped", 10*time.Second, func() bool {
			st, _ := s.Status(cfg.Name)
			return st.PID == 0
		})
		h.call(s, echo, `{"text":"x"}`)
		if st, _ := s.Status(cfg.Name); st.Starts != i+2 {
			t.Errorf("after /mcp restart %s: %d starts, want %d", name, st.Starts, i+2)
		}
	}
	if err := s.Restart("github.com/other"); err == nil {
		t.Error("a restart of an unknown server succeeded")
	}
}
