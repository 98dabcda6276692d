package mcpclient

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// deadlineEndpoint is a memEndpoint that notes the deadline each tool
// call is given.
type deadlineEndpoint struct {
	*memEndpoint
	mu        *sync.Mutex
	deadlines *[]time.Time
}

func (d *deadlineEndpoint) roundTrip(ctx context.Context, m message, deadline time.Time) (reply, error) {
	if m.method == "tools/call" {
		d.mu.Lock()
		*d.deadlines = append(*d.deadlines, deadline)
		d.mu.Unlock()
	}
	return d.memEndpoint.roundTrip(ctx, m, deadline)
}

// The call timeout counts from when the call has its server: a call that
// waits for the start counts from the start's end, one on a running
// server from the call's start (the clock it read first, not read again).
func TestCallTimeoutCountsFromTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const startTakes, timeout = 5 * time.Minute, time.Minute
		cfg := mcpconfig.ServerConfig{Name: "mem", Command: "/bin/true", Enabled: true, StartupTimeout: time.Hour,
			CallTimeout: timeout}
		mem := &memServer{}
		h := newHarness(t, nil, cfg)
		a := h.session("")
		var mu sync.Mutex
		var deadlines []time.Time
		h.client.sp.dial = func(ctx context.Context, cfg mcpconfig.ServerConfig, sp mcpconfig.Spawn, onExit func(), p *peer) (endpoint, error) {
			time.Sleep(startTakes)
			ep, err := mem.dial(ctx, cfg, sp, onExit, p)
			return &deadlineEndpoint{memEndpoint: ep.(*memEndpoint), mu: &mu, deadlines: &deadlines}, err
		}
		tool := Tool{Server: "mem", MCPName: "echo", Name: "echo"}
		t0 := time.Now()
		if res := h.call(a, tool, `{"text":"one"}`); res.IsError {
			t.Fatalf("first call: %+v", res)
		}
		time.Sleep(time.Second)
		t1 := time.Now()
		if res := h.call(a, tool, `{"text":"two"}`); res.IsError {
			t.Fatalf("second call: %+v", res)
		}
		mu.Lock()
		defer mu.Unlock()
		want := []time.Time{t0.Add(startTakes + timeout), t1.Add(timeout)}
		if len(deadlines) != len(want) {
			t.Fatalf("deadlines %v, want %v", deadlines, want)
		}
		for i := range want {
			if !deadlines[i].Equal(want[i]) {
				t.Errorf("call %d: deadline %v after the first call's start, want %v", i+1, deadlines[i].Sub(t0), want[i].Sub(t0))
			}
		}
	})
}
