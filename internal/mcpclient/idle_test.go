package mcpclient

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The disk watcher's view of a chat's connections: what runs, whether it
// was idle since a time, and an idle stop that refuses while a call is in
// flight.
func TestIdleSinceAndStopIdle(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	if got := s.Running(); len(got) != 0 || s.IdleSince("fake", time.Now()) || s.StopIdle("fake", "test") {
		t.Fatalf("before a call: running %q, idle or stopped", got)
	}
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"hi"}`)
	if got := s.Running(); !slices.Equal(got, []string{"fake"}) {
		t.Errorf("Running = %q, want fake", got)
	}
	before := time.Now()
	if s.IdleSince("fake", before.Add(-time.Hour)) {
		t.Error("idle since before the call that ended")
	}
	if !s.IdleSince("fake", before) {
		t.Error("not idle since the call ended")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Call(ctx, h.tool("fake", fakemcp.ToolSlow), []byte(`{}`))
	}()
	testkit.WaitFor(t, "the slow call in flight", 10*time.Second, func() bool { st, _ := s.Status("fake"); return st.InFlight == 1 })
	if s.IdleSince("fake", before) || s.StopIdle("fake", "test") {
		t.Error("idle, or stopped, with a call in flight")
	}
	cancel()
	<-done
	if s.IdleSince("fake", before) {
		t.Error("idle since before a call that ended after it")
	}
	st, _ := s.Status("fake")
	pid := st.PID
	if !s.StopIdle("fake", "a test") {
		t.Fatal("StopIdle refused an idle process")
	}
	if st, _ := s.Status("fake"); st.State != StateNotStarted || len(s.Running()) != 0 {
		t.Errorf("after StopIdle: %s, running %q", st.State, s.Running())
	}
	testkit.WaitFor(t, "the process to end", 10*time.Second, func() bool { return gone(pid) })
	if res := h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"again"}`); res.Text() != "again" {
		t.Errorf("the next call: %q", res.Text())
	}
}

// A process the chat's running turn holds (it called it, and the model
// now thinks before the next call) is not stopped: the turn keeps what it
// uses, as with an eviction. Once the turn ends it can be.
func TestStopIdleSparesWhatATurnHolds(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	end := s.BeginTurn()
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"hi"}`)
	if s.StopIdle("fake", "a test") {
		t.Fatal("StopIdle stopped the process the chat's running turn holds")
	}
	end()
	if !s.StopIdle("fake", "a test") {
		t.Error("StopIdle refused once the turn ended")
	}
}
