package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// watchOOM gives h's client the counter at path and watches it every
// 10 ms until the test ends.
func watchOOM(t *testing.T, h *harness, c OOMCounter) {
	t.Helper()
	h.client.oom = &oomWatch{counter: c, logger: h.client.sp.logger, now: time.Now}
	h.client.sp.oom = h.client.oom
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.client.WatchMemory(ctx, 10*time.Millisecond) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// A server's process killed by the kernel's OOM killer: the next call is
// told so, the log says so with the server's name, /mcp says so, and the
// call after works (the count read from a memory.events file the test
// writes).
func TestOOMKillOfAServerIsTold(t *testing.T) {
	events := filepath.Join(t.TempDir(), "memory.events")
	write := func(n string) {
		if err := os.WriteFile(events, []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill "+n+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("4") // kills before the bot started are not its
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	watchOOM(t, h, OOMCounter{Path: events})
	s := h.session("")
	echo := h.tool("fake", fakemcp.ToolEcho)
	if res := h.call(s, echo, `{"text":"one"}`); res.IsError {
		t.Fatalf("first call: %+v", res)
	}
	if k := s.MCPStatus().OutOfMemory; k != nil {
		t.Fatalf("/mcp before any kill: %+v", k)
	}
	st, _ := s.Status("fake")
	write("5")
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the exit to be seen", 10*time.Second, func() bool { st, _ := s.Status("fake"); return st.State == StateExited })

	res := h.call(s, echo, `{"text":"two"}`)
	if !res.IsError || !strings.Contains(res.Text(), "The bot's machine ran out of memory: the kernel killed the fake MCP server.") {
		t.Errorf("the call after the kill: %+v", res)
	}
	if k := s.MCPStatus().OutOfMemory; k == nil || k.Kills != 1 || k.Machine || !slices.Equal(k.Servers, []string{"fake"}) || k.Last.IsZero() {
		t.Errorf("/mcp's OOM kills: %+v", k)
	}
	if st := detailOf(t, s, "fake"); !strings.Contains(st.LastExit+"\n"+st.LastError, "exited (signal: killed): killed by the kernel, out of memory") {
		t.Errorf("/mcp fake: %+v", st)
	}
	if logs := h.logs.String(); !strings.Contains(logs, "the kernel's OOM killer ended processes") || !strings.Contains(logs, "server=fake") {
		t.Errorf("log:\n%s", logs)
	}
	if res := h.call(s, echo, `{"text":"three"}`); res.IsError {
		t.Errorf("the call after: %+v", res)
	}
}

// A process the bot did not start itself — a browser's renderer, a
// server's grandchild — killed for memory in a real memory cgroup: the log
// and /mcp say so, the server lives on and answers. Needs a memory cgroup
// this test may make (root).
func TestOOMKillOfAGrandchildIsTold(t *testing.T) {
	dir, counter := fakemcp.MemoryCgroup(t, 64<<20)
	cfg, log := fakeServer(t, "fake", fakemcp.ModeHogGrandchild)
	cfg = withEnv(cfg, fakemcp.EnvMemcg, dir)
	h := newHarness(t, nil, cfg)
	watchOOM(t, h, OOMCounter{Path: counter})
	s := h.session("")
	echo := h.tool("fake", fakemcp.ToolEcho)
	if res := h.call(s, echo, `{"text":"one"}`); res.IsError {
		t.Fatalf("first call: %+v", res)
	}
	hogs := fakemcp.WaitForEvents(t, log, fakemcp.EventHog, 2, 10*time.Second) // the discovery's and the chat's
	fakemcp.WaitDead(t, 30*time.Second, hogs[1].PID)
	testkit.WaitFor(t, "/mcp to say so", 10*time.Second, func() bool {
		k := s.MCPStatus().OutOfMemory
		return k != nil && k.Kills > 0 && !k.Machine
	})
	testkit.WaitFor(t, "the log to say so", 10*time.Second, func() bool {
		return strings.Contains(h.logs.String(), "the kernel's OOM killer ended processes under the bot's memory limit")
	})
	if res := h.call(s, echo, `{"text":"two"}`); res.IsError || !strings.Contains(res.Text(), "two") {
		t.Errorf("the call after: %+v", res)
	}
	t.Logf("/mcp: %+v", s.MCPStatus().OutOfMemory)
}
