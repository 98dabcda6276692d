package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// startFake starts the fake server with modes as a bare process with a
// transport, as openSession does, without the handshake.
func startFake(t *testing.T, modes ...string) *process {
	t.Helper()
	l := fakemcp.Command(modes...)
	p, err := startProcess(mcpconfig.Spawn{Command: l.Command, Args: l.Args, Dir: t.TempDir(),
		Env: append(os.Environ(), l.Environ()...)}, spawnOptions{name: "fake", logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.terminate)
	return p
}

func startRPC(t *testing.T, modes ...string) (*rpc, *stdioTransport) {
	t.Helper()
	p := startFake(t, modes...)
	c := &rpc{tr: p.tr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.handshake(ctx, "", clientInfo{Name: "test", Version: "0"}); err != nil {
		t.Fatal(err)
	}
	return c, p.tr
}

// The transport.Interface adapter is a working transport for mcp-go's own
// client.
func TestTransportDrivesMCPGoClient(t *testing.T) {
	p := startFake(t, fakemcp.ModeNormal)
	c := mcpgo.NewClient(p.tr)
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
	c, tr := startRPC(t, fakemcp.ModeNormal)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				var raw json.RawMessage
				var err error
				want := fmt.Sprintf("g%d-%d", g, i)
				if (g+i)%5 == 0 {
					raw, err = c.callTool(ctx, fakemcp.ToolSleep, json.RawMessage(`{"ms":20}`), time.Time{})
					want = "slept 20 ms"
				} else {
					raw, err = c.callTool(ctx, fakemcp.ToolEcho, json.RawMessage(`{"text":"`+want+`"}`), time.Now().Add(10*time.Second))
				}
				if err != nil {
					errs <- err
					return
				}
				if res, err := MapResult("fake", "t", raw); err != nil || res.Text() != want {
					errs <- fmt.Errorf("want %q, got %+v (%v)", want, res, err)
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

// A deadline ends the wait with errCallTimeout whether the caller is the
// reader or waits behind one; the late answers are dropped and the
// transport goes on.
func TestTransportDeadline(t *testing.T) {
	c, _ := startRPC(t, fakemcp.ModeNormal)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 { // one reads, the other waits for the token
		wg.Go(func() {
			start := time.Now()
			_, err := c.callTool(ctx, fakemcp.ToolSleep, json.RawMessage(`{"ms":5000}`), start.Add(200*time.Millisecond))
			if !errors.Is(err, errCallTimeout) {
				t.Errorf("err = %v, want the call timeout", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the timeout took %v", d)
			}
		})
	}
	wg.Wait()
	raw, err := c.callTool(ctx, fakemcp.ToolEcho, json.RawMessage(`{"text":"after"}`), time.Now().Add(5*time.Second))
	if res, _ := MapResult("fake", "echo", raw); err != nil || res.Text() != "after" {
		t.Fatalf("after the timeouts: %s %v", raw, err)
	}
}

// Cancelling a caller's context ends its wait (the reader's blocked read is
// woken), and the other callers are not disturbed.
func TestTransportCancel(t *testing.T) {
	c, _ := startRPC(t, fakemcp.ModeNormal)
	ctx, cancel := context.WithCancel(context.Background())
	slow := make(chan error, 1)
	go func() {
		_, err := c.callTool(ctx, fakemcp.ToolSleep, json.RawMessage(`{"ms":5000}`), time.Time{})
		slow <- err
	}()
	other := make(chan error, 1)
	go func() {
		_, err := c.callTool(context.Background(), fakemcp.ToolSleep, json.RawMessage(`{"ms":400}`), time.Time{})
		other <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-slow:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if err := <-other; err != nil {
		t.Errorf("the other call: %v", err)
	}
}
