package mcpclient

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// A server's notifications/tools/list_changed refreshes the catalogue from
// the live server: the session is told (ToolsChanged waits for the
// refresh), Tools offers the new list, a tool that vanished answers why,
// and a flood of notifications costs at most two tools/list.
func TestToolsListChanged(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeChanging)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	offered := func(name string) bool {
		tools, _ := h.client.Tools(ctx)
		return slices.ContainsFunc(tools, func(tl Tool) bool { return tl.MCPName == name })
	}

	if s.ToolsChanged(ctx) {
		t.Error("ToolsChanged before any notification")
	}
	h.call(s, h.tool("fake", fakemcp.ToolAddTool), `{"name":"late"}`)
	if !s.ToolsChanged(ctx) {
		t.Fatal("no change reported after add_tool")
	}
	if !offered("late") {
		t.Fatal("the refreshed catalogue does not offer late")
	}
	if s.ToolsChanged(ctx) {
		t.Error("the same change reported twice")
	}
	late := h.tool("fake", "late")
	if res := h.call(s, late, `{}`); res.IsError || res.Text() != "I am late" {
		t.Errorf("late: %q (error %v)", res.Text(), res.IsError)
	}

	h.call(s, h.tool("fake", fakemcp.ToolRemoveTool), `{"name":"late"}`)
	if !s.ToolsChanged(ctx) || offered("late") {
		t.Fatal("late still offered after remove_tool")
	}
	if res := h.call(s, late, `{}`); !res.IsError || !strings.Contains(res.Text(), "no longer offers late: its tool list changed") {
		t.Errorf("the vanished tool: %q (error %v), want why", res.Text(), res.IsError)
	}

	lists := func() int { return len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventList)) }
	before := lists()
	h.call(s, h.tool("fake", fakemcp.ToolFlood), `{"n":100}`)
	if !s.ToolsChanged(ctx) {
		t.Fatal("no change reported after the flood")
	}
	if n := lists() - before; n < 1 || n > 2 {
		t.Errorf("100 notifications cost %d tools/list, want 1 or 2 (debounced)", n)
	}
	if n := strings.Count(h.logs.String(), "catalogue refreshed"); n > 4 {
		t.Errorf("%d refreshes for add, remove and a flood of 100", n)
	}
}

// A client that closes while a refresh waits out its pause ends it: no
// refresh is left running (Close waits for them), and a session waiting
// for one returns.
func TestToolsListChangedClose(t *testing.T) {
	cfg, _ := fakeServer(t, "fake", fakemcp.ModeChanging)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolFlood), `{"n":2}`)
	h.call(s, h.tool("fake", fakemcp.ToolFlood), `{"n":2}`) // within the pause: a second refresh waits
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ToolsChanged(context.Background())
	}()
	h.client.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ToolsChanged still waits after Close")
	}
}
