package fakemcp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestNormalOverBothProtocolEras(t *testing.T) {
	tests := []struct {
		name        string
		opts        []client.ClientOption
		wantVersion string
	}{
		{"default negotiates 2026-07-28 via server/discover", nil, mcp.ProtocolVersion20260728},
		{"pinned 2025-11-25 uses initialize", []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20251125)}, mcp.ProtocolVersion20251125},
		{"pinned 2024-11-05 uses initialize", []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20241105)}, mcp.ProtocolVersion20241105},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, init := startClient(t, fakemcp.Command("normal"), "", tt.opts...)
			if init.ProtocolVersion != tt.wantVersion || c.ProtocolVersion() != tt.wantVersion {
				t.Errorf("protocol = %q (client %q), want %q", init.ProtocolVersion, c.ProtocolVersion(), tt.wantVersion)
			}
			if init.ServerInfo.Name != fakemcp.ServerName || init.ServerInfo.Version != fakemcp.ServerVersion {
				t.Errorf("server info = %+v", init.ServerInfo)
			}

			ctx := context.Background()
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if want := fakemcp.ToolNames(); !slices.Equal(names, want) {
				t.Errorf("tools = %v, want %v", names, want)
			}

			if got := onlyText(t, callTool(t, c, fakemcp.ToolEcho, map[string]any{"text": "héllo\n\"x\""})); got != "héllo\n\"x\"" {
				t.Errorf("echo = %q", got)
			}

			img := callTool(t, c, fakemcp.ToolImage, nil)
			ic, ok := img.Content[0].(mcp.ImageContent)
			if !ok || ic.MIMEType != "image/png" {
				t.Fatalf("image = %#v", img.Content)
			}
			data, _ := base64.StdEncoding.DecodeString(ic.Data)
			cfg, err := png.DecodeConfig(bytes.NewReader(data))
			if err != nil || cfg.Width != 1 || cfg.Height != 1 {
				t.Errorf("image config = %+v, %v", cfg, err)
			}

			fail := callTool(t, c, fakemcp.ToolFail, nil)
			if !fail.IsError || onlyText(t, fail) != fakemcp.FailText {
				t.Errorf("fail = %+v", fail)
			}

			if got := onlyText(t, callTool(t, c, fakemcp.ToolSleep, map[string]any{"ms": 20})); got != "slept 20 ms" {
				t.Errorf("sleep = %q", got)
			}

			_, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: fakemcp.ToolJSONRPCError}})
			if err == nil || !strings.Contains(err.Error(), fakemcp.JSONRPCErrorMessage) {
				t.Errorf("jsonrpc_error: err = %v", err)
			}
		})
	}
}

func TestSlowObservesCancellation(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20260728, mcp.ProtocolVersion20251125} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "log")
			c, _ := startClient(t, fakemcp.Command("normal", fakemcp.ModeLogCalls).WithLog(log), "", client.WithProtocolVersion(version))

			// The deadline passes once the call runs (300 ms set before it
			// could pass before the call reached the fake, which then had
			// nothing to cancel).
			ctx, expire := testkit.DeadlineOnCue(context.Background())
			go func() {
				if testkit.Until(10*time.Second, func() bool {
					events, _ := fakemcp.ParseLog(log)
					return len(fakemcp.Filter(events, fakemcp.EventCall)) > 0
				}) {
					expire()
				}
			}()
			_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: fakemcp.ToolSlow}})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("slow: err = %v, want deadline exceeded", err)
			}
			ev := fakemcp.WaitForEvents(t, log, fakemcp.EventCancelled, 1, 5*time.Second)[0]
			if ev.Tool != fakemcp.ToolSlow || ev.RequestID == "" || ev.Reason == "" || ev.PID == 0 {
				t.Errorf("cancelled event = %+v", ev)
			}
			// The connection still works after a cancellation.
			if got := onlyText(t, callTool(t, c, fakemcp.ToolEcho, map[string]any{"text": "after"})); got != "after" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}

func TestSlowInterruptedByClose(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log")
	w := startWire(t, fakemcp.Command("normal", fakemcp.ModeLogCalls).WithLog(log), t.TempDir())
	w.handshake()
	w.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`)
	fakemcp.WaitForEvents(t, log, fakemcp.EventCall, 1, 10*time.Second) // the call runs
	_ = w.stdin.Close()
	if code := w.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	events := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventInterrupted)
	if len(events) != 1 || events[0].Tool != fakemcp.ToolSlow || events[0].RequestID != "7" {
		t.Errorf("events = %+v, want one interrupted slow", events)
	}
}

func TestCountStartsEnvAndBrowser(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	log := filepath.Join(tmp, "log")
	workspace := filepath.Join(tmp, "workspace")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(workspace, ".playwright")
	l := fakemcp.Command("count-starts", "env").WithLog(log).WithEnv("EXTRA_VAR", "x y").
		WithArgs("--browser", "chromium", "--output-dir", out)

	c, _ := startClient(t, l, workspace)
	c2, _ := startClient(t, l, workspace)
	_ = c2.Close()

	starts := fakemcp.WaitForEvents(t, log, fakemcp.EventStart, 2, 5*time.Second)
	if len(starts) != 2 || starts[0].PID == starts[1].PID {
		t.Fatalf("starts = %+v", starts)
	}
	ev := starts[0]
	if ev.Cwd != workspace {
		t.Errorf("cwd = %q, want %q", ev.Cwd, workspace)
	}
	if want := []string{"--browser", "chromium", "--output-dir", out}; !slices.Equal(ev.Args, want) {
		t.Errorf("args = %q, want %q", ev.Args, want)
	}
	if want := []string{"count-starts", "env"}; !slices.Equal(ev.Modes, want) {
		t.Errorf("modes = %q, want %q", ev.Modes, want)
	}
	for _, kv := range []string{"FAKE_MCP_MODE=count-starts,env", "EXTRA_VAR=x y", "FAKE_MCP_LOG=" + log} {
		if !slices.Contains(ev.Env, kv) {
			t.Errorf("start env lacks %q", kv)
		}
	}

	env := onlyText(t, callTool(t, c, fakemcp.ToolEnv, nil))
	if !slices.Contains(strings.Split(env, "\n"), "EXTRA_VAR=x y") || !slices.IsSorted(strings.Split(env, "\n")) {
		t.Errorf("env tool output unsorted or lacks EXTRA_VAR:\n%s", env)
	}

	if got := onlyText(t, callTool(t, c, fakemcp.ToolBrowserNavigate, map[string]any{"url": "https://example.com"})); got != "navigated to https://example.com" {
		t.Errorf("navigate = %q", got)
	}
	shot := callTool(t, c, fakemcp.ToolBrowserScreenshot, map[string]any{"filename": "shots/page.png"})
	if len(shot.Content) != 2 {
		t.Fatalf("screenshot content = %#v", shot.Content)
	}
	if ic, ok := shot.Content[1].(mcp.ImageContent); !ok || ic.MIMEType != "image/png" {
		t.Errorf("screenshot content[1] = %#v", shot.Content[1])
	}
	data, err := os.ReadFile(filepath.Join(workspace, "shots", "page.png"))
	if err != nil || !bytes.Equal(data, fakemcp.PNG1x1()) {
		t.Errorf("screenshot file: %v", err)
	}
	// Without a filename it goes to the output dir.
	callTool(t, c, fakemcp.ToolBrowserScreenshot, nil)
	if m, _ := filepath.Glob(filepath.Join(out, "page-*.png")); len(m) != 1 {
		t.Errorf("output dir holds %v", m)
	}
}

func TestPaginated(t *testing.T) {
	t.Parallel()
	c, _ := startClient(t, fakemcp.Command("normal", "paginated", "builtin-clash"), "",
		client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	ctx := context.Background()
	var names []string
	var req mcp.ListToolsRequest
	pages := 0
	for {
		page, err := c.ListToolsByPage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.Tools) > 2 {
			t.Fatalf("page %d has %d tools", pages, len(page.Tools))
		}
		for _, tool := range page.Tools {
			names = append(names, tool.Name)
		}
		if page.NextCursor == "" {
			break
		}
		if pages > 50 {
			t.Fatal("endless pagination")
		}
		req.Params.Cursor = page.NextCursor
	}
	want := fakemcp.ToolNames("paginated", "builtin-clash")
	if !slices.Equal(names, want) || pages < len(want)/2 {
		t.Errorf("%d pages of %v, want pages of 2 of %v", pages, names, want)
	}
	if !slices.Contains(names, fakemcp.ToolSend) {
		t.Error("builtin-clash: no send tool")
	}
}

func TestRawEchoWithMCPGoClient(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c, init := startClient(t, fakemcp.Command("raw-echo"), "")
	// raw-echo refuses server/discover at once: no 5 s discover stall.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("handshake took %v", d)
	}
	if init.ProtocolVersion != mcp.ProtocolVersion20251125 || init.ServerInfo.Name != fakemcp.ServerName {
		t.Errorf("init = %+v", init)
	}
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != fakemcp.ToolEcho {
		t.Fatalf("tools = %+v, %v", list, err)
	}
	if got := onlyText(t, callTool(t, c, fakemcp.ToolEcho, map[string]any{"text": "ping\tpong"})); got != "ping\tpong" {
		t.Errorf("echo = %q", got)
	}
}

func TestToolNames(t *testing.T) {
	if n := len(fakemcp.LongToolName); n <= 48 {
		t.Errorf("LongToolName has %d characters", n)
	}
	normal := fakemcp.ToolNames()
	for _, name := range []string{fakemcp.ToolEcho, fakemcp.ToolWeird, fakemcp.ToolWeirdSanitised, fakemcp.LongToolName, fakemcp.ToolNoSchema, fakemcp.ToolUnknownContent} {
		if !slices.Contains(normal, name) {
			t.Errorf("normal tools lack %q", name)
		}
	}
	for _, name := range []string{fakemcp.ToolEnv, fakemcp.ToolSend, fakemcp.ToolBrowserNavigate} {
		if slices.Contains(normal, name) {
			t.Errorf("normal tools include %q", name)
		}
	}
	all := fakemcp.ToolNames("env", "builtin-clash", "--output-dir")
	if len(all) != len(normal)+4 {
		t.Errorf("env+builtin-clash+browser = %v", all)
	}
	if got := fakemcp.ToolNames("raw-echo"); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("raw-echo tools = %v", got)
	}
}
