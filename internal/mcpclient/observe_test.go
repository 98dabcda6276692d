package mcpclient

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// callLog is an Observer that records the calls' outcomes.
type callLog struct {
	noObserver
	mu    sync.Mutex
	calls []CallOutcome
}

func (l *callLog) CallDone(_ string, _ time.Duration, outcome CallOutcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, outcome)
}

func (l *callLog) outcomes() []CallOutcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]CallOutcome(nil), l.calls...)
}

// Every call is observed, the ones cut short by the caller (/stop, the
// turn's end) too: they were missing from the latency histogram, and a
// server whose calls are all stopped looked idle.
func TestEveryCallIsObserved(t *testing.T) {
	cfg, log := fakeServer(t, "fake", fakemcp.ModeLogCalls)
	h := newHarness(t, nil, cfg)
	obs := &callLog{}
	h.client.observer = obs
	s := h.session("")

	for i, tt := range []struct {
		tool, args string
		stop       bool
		want       CallOutcome
	}{
		{fakemcp.ToolEcho, `{"text":"x"}`, false, CallOK},
		{fakemcp.ToolFail, `{}`, false, CallError},
		{fakemcp.ToolSlow, `{}`, true, CallCancelled},
	} {
		before := len(obs.outcomes())
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := s.Call(ctx, h.tool("fake", tt.tool), []byte(tt.args))
			errc <- err
		}()
		if tt.stop {
			fakemcp.WaitForEvents(t, log, fakemcp.EventCall, i+1, 10*time.Second) // the call reached the server
			cancel(errors.New("stopped by the user"))
		}
		err := <-errc
		cancel(nil)
		if tt.stop != (err != nil) {
			t.Fatalf("%s: err %v", tt.tool, err)
		}
		got := obs.outcomes()
		if len(got) != before+1 || got[before] != tt.want {
			t.Errorf("%s: observed %v, want one more, %q", tt.tool, got[before:], tt.want)
		}
	}
}
