package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestMain(m *testing.M) {
	fakemcp.MainIfRequested()
	os.Exit(m.Run())
}

// startFake starts the fake server with modes as a bare process, without
// the handshake.
func startFake(t *testing.T, modes ...string) *Process {
	t.Helper()
	l := fakemcp.Command(modes...)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
		Options{Name: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	return p
}

var ids atomic.Int64

// initialized starts the fake and performs the handshake on its transport.
func initialized(t *testing.T, modes ...string) *Transport {
	t.Helper()
	p := startFake(t, modes...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	params := map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "test", "version": "0"}}
	if _, err := p.Transport().RoundTrip(ctx, Request{ID: ids.Add(1), Method: "initialize", Params: params}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := p.Transport().Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	return p.Transport()
}

// callText calls tool and returns the text of its answer.
func callText(ctx context.Context, tr *Transport, tool, args string, deadline time.Time) (string, error) {
	r, err := tr.RoundTrip(ctx, Request{ID: ids.Add(1), Method: "tools/call", Tool: tool, Args: json.RawMessage(args)}, deadline)
	if err != nil {
		return "", err
	}
	if r.Error != nil {
		return "", fmt.Errorf("JSON-RPC error %s", r.Error)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		return "", fmt.Errorf("result %s: %v", r.Result, err)
	}
	return res.Content[0].Text, nil
}

// The transport.Interface adapter is a working transport for mcp-go's own
// client.
func TestTransportDrivesMCPGoClient(t *testing.T) {
	p := startFake(t, fakemcp.ModeNormal)
	c := mcpgo.NewClient(p.Transport())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = fakemcp.ToolEcho
	req.Params.Arguments = map[string]any{"text": "through mcp-go"}
	res, err := c.CallTool(ctx, req)
	if err != nil || len(res.Content) != 1 || mcp.GetTextFromContent(res.Content[0]) != "through mcp-go" {
		t.Fatalf("tools/call: %+v %v", res, err)
	}
	req.Params.Name = fakemcp.ToolJSONRPCError
	if _, err := c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), fakemcp.JSONRPCErrorMessage) {
		t.Fatalf("JSON-RPC error: %v", err)
	}
}

// Concurrent calls on one transport: whoever reads delivers every answer to
// its own caller, slow and fast calls interleaved, waiters reused.
func TestTransportConcurrentCalls(t *testing.T) {
	tr := initialized(t, fakemcp.ModeNormal)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				var got string
				var err error
				want := fmt.Sprintf("g%d-%d", g, i)
				if (g+i)%5 == 0 {
					got, err = callText(ctx, tr, fakemcp.ToolSleep, `{"ms":20}`, time.Time{})
					want = "slept 20 ms"
				} else {
					got, err = callText(ctx, tr, fakemcp.ToolEcho, `{"text":"`+want+`"}`, time.Now().Add(10*time.Second))
				}
				if err != nil {
					errs <- err
					return
				}
				if got != want {
					errs <- fmt.Errorf("want %q, got %q", want, got)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.pending) != 0 || len(tr.free) > 8 {
		t.Errorf("%d pending, %d free waiters after the calls", len(tr.pending), len(tr.free))
	}
}

// A deadline ends the wait with ErrTimeout whether the caller is the
// reader or waits behind one; the late answers are dropped and the
// transport goes on.
func TestTransportDeadline(t *testing.T) {
	tr := initialized(t, fakemcp.ModeNormal)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 { // one reads, the other waits for the token
		wg.Go(func() {
			start := time.Now()
			_, err := callText(ctx, tr, fakemcp.ToolSleep, `{"ms":5000}`, start.Add(200*time.Millisecond))
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("err = %v, want the call timeout", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the timeout took %v", d)
			}
		})
	}
	wg.Wait()
	if got, err := callText(ctx, tr, fakemcp.ToolEcho, `{"text":"after"}`, time.Now().Add(5*time.Second)); err != nil || got != "after" {
		t.Fatalf("after the timeouts: %q %v", got, err)
	}
}

// A call whose deadline is within deadlineSlack of the one the last call
// set keeps that one (no clock read, no timer update) even when it has
// passed: the read and the write it ends at once set the call's own
// deadline and go on, and the call is answered.
func TestTransportKeptDeadlineThatPassed(t *testing.T) {
	tr := initialized(t, fakemcp.ModeNormal)
	ctx := context.Background()
	first := time.Now().Add(300 * time.Millisecond)
	if got, err := callText(ctx, tr, fakemcp.ToolEcho, `{"text":"one"}`, first); err != nil || got != "one" {
		t.Fatalf("first call: %q %v", got, err)
	}
	time.Sleep(time.Until(first) + 20*time.Millisecond) // the first call's deadline is what this test is about
	second := time.Now().Add(deadlineSlack / 2)
	if second.Sub(first) >= deadlineSlack {
		t.Skip("the machine slept past the slack: the kept deadline is not exercised")
	}
	if got, err := callText(ctx, tr, fakemcp.ToolEcho, `{"text":"two"}`, second); err != nil || got != "two" {
		t.Fatalf("a call after the kept deadline passed: %q %v", got, err)
	}
}

// Cancelling a caller's context ends its wait at once (the reader's blocked
// read is woken: without that wake-up it would read on until its own answer
// came), and the other callers are not disturbed.
func TestTransportCancel(t *testing.T) {
	tr := initialized(t, fakemcp.ModeNormal)
	ctx, cancel := context.WithCancel(context.Background())
	slow := make(chan error, 1)
	go func() {
		_, err := callText(ctx, tr, fakemcp.ToolSleep, `{"ms":10000}`, time.Time{})
		slow <- err
	}()
	// The slow call holds the read token once it waits; the other one
	// waits behind it. (State inside the transport: no event to wait on.)
	testkit.WaitFor(t, "the slow call to hold the read token", 10*time.Second, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.pending) == 1 && len(tr.read) == 1
	})
	other := make(chan error, 1)
	go func() {
		_, err := callText(context.Background(), tr, fakemcp.ToolSleep, `{"ms":300}`, time.Time{})
		other <- err
	}()
	cancel()
	cancelled := time.Now()
	select {
	case err := <-slow:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
		if d := time.Since(cancelled); d > time.Second {
			t.Errorf("the cancelled call returned %v after the cancel, want well under a second", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if err := <-other; err != nil {
		t.Errorf("the other call: %v", err)
	}
}
