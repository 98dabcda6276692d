package mcpclient

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// sharedServer is the fake as a Shared server: one process on ${port},
// every chat a session of its own, serving only the Host name of its start
// (HostEnv), as the shared browser does.
func sharedServer(t *testing.T, name string, modes ...string) (mcpconfig.ServerConfig, string) {
	t.Helper()
	cfg, logPath := fakeServer(t, name, append([]string{fakemcp.ModeSharedHost, fakemcp.ModeCountStarts}, modes...)...)
	cfg.Args = append(cfg.Args, "--port", "${port}")
	cfg.URL = "http://127.0.0.1:${port}/mcp"
	cfg.Cwd = t.TempDir()
	cfg.Shared = true
	cfg.HostEnv = fakemcp.AllowedHostsEnv
	return cfg, logPath
}

// One process serves every chat: each chat's session is its own (what one
// keeps the other does not see) and names the chat's workspace as its root.
func TestSharedServerOneProcessSessionsApart(t *testing.T) {
	cfg, logPath := sharedServer(t, "shared")
	h := newHarness(t, nil, cfg)
	alice, bob := h.session(""), h.session("")
	remember, recall, whoami := h.tool("shared", fakemcp.ToolRemember), h.tool("shared", fakemcp.ToolRecall), h.tool("shared", fakemcp.ToolWhoAmI)

	if got := h.call(alice, whoami, `{}`).Text(); got != "root: "+alice.Workspace() {
		t.Errorf("alice's root: %q, want %s", got, alice.Workspace())
	}
	if got := h.call(bob, whoami, `{}`).Text(); got != "root: "+bob.Workspace() {
		t.Errorf("bob's root: %q, want %s", got, bob.Workspace())
	}
	h.call(alice, remember, `{"value":"alice's secret"}`)
	if got := h.call(bob, recall, `{}`).Text(); got != "remembered nothing" {
		t.Errorf("bob sees %q", got)
	}
	if got := h.call(alice, recall, `{}`).Text(); got != "remembered: alice's secret" {
		t.Errorf("alice sees %q", got)
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 1 {
		t.Errorf("%d processes started for discovery and two chats, want 1", n)
	}
	for _, l := range h.client.Load() {
		if l.Server == "shared" && (l.Live != 2 || l.Memory <= 0) {
			t.Errorf("load %+v, want 2 live sessions and the process's memory", l)
		}
	}
	if sh := detailOf(t, alice, "shared").Shared; sh == nil || sh.PID == 0 || sh.Users != 2 {
		t.Errorf("/mcp shared: %+v", sh)
	}
}

// The chat's state is saved before a graceful stop and restored at the
// next start, in the chat's private folder (nothing of it is left in the
// workspace); a crash of the process is reported to the call that meets it
// and the next call starts it again.
func TestSharedServerStateAndCrash(t *testing.T) {
	cfg, logPath := sharedServer(t, "shared")
	cfg.State = &mcpconfig.StateTools{Save: fakemcp.ToolSaveState, Restore: fakemcp.ToolRestoreState, File: "state.json"}
	h := newHarness(t, nil, cfg)
	alice := h.session("")
	remember, recall := h.tool("shared", fakemcp.ToolRemember), h.tool("shared", fakemcp.ToolRecall)

	h.call(alice, remember, `{"value":"logged in"}`)
	statePath := filepath.Join(alice.private, "state.json")
	testkit.WaitFor(t, "the state saved when the chat's calls pause", 10*time.Second, func() bool {
		b, _ := os.ReadFile(statePath)
		return strings.Contains(string(b), "logged in")
	})
	h.call(alice, remember, `{"value":"logged in twice"}`) // within the minute: saved at the stop
	if err := alice.Restart("shared"); err != nil {        // /mcp restart: a graceful stop
		t.Fatal(err)
	}
	if b, err := os.ReadFile(statePath); err != nil || !strings.Contains(string(b), "logged in twice") {
		t.Fatalf("saved state %q (%v)", b, err)
	}
	if fi, err := os.Stat(statePath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the saved state's mode: %v (%v), want 0600: it holds logins", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(alice.Workspace()); len(entries) != 0 {
		t.Errorf("the workspace holds %v after the saves, want nothing", entries)
	}
	if got := h.call(alice, recall, `{}`).Text(); got != "remembered: logged in twice" {
		t.Errorf("after the restart alice sees %q, want her state restored", got)
	}

	pid, _, _ := h.client.sp.hosts["shared"].status()
	if pid == 0 {
		t.Fatal("no shared process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the shared process to die", 10*time.Second, func() bool { p, _, _ := h.client.sp.hosts["shared"].status(); return p == 0 })
	if res := h.call(alice, recall, `{}`); !res.IsError {
		t.Errorf("the call after the crash: %q, want an error that says the connection failed", res.Text())
	}
	if res := h.call(alice, recall, `{}`); res.IsError || res.Text() != "remembered: logged in twice" {
		t.Errorf("the next call: %q (error %v), want the process started again and the state restored", res.Text(), res.IsError)
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
		t.Errorf("%d starts of the shared process, want 2", n)
	}
}

// The process stops when no chat has used it for the idle timeout, and
// starts again with the next call.
func TestSharedServerIdleStop(t *testing.T) {
	cfg, logPath := sharedServer(t, "shared")
	cfg.IdleTimeout = 200 * time.Millisecond
	h := newHarness(t, nil, cfg)
	alice := h.session("")
	recall := h.tool("shared", fakemcp.ToolRecall)
	h.call(alice, recall, `{}`)
	testkit.WaitFor(t, "the idle stop of the chat's session and of the process", 10*time.Second, func() bool {
		p, users, _ := h.client.sp.hosts["shared"].status()
		return p == 0 && users == 0
	})
	h.call(alice, recall, `{}`)
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
		t.Errorf("%d starts, want 2 (stopped when idle, started again)", n)
	}
}

// disabledTools hides tools from the model (and says which names match
// none), and the live list a started process reports is compared with the
// catalogue as the catalogue has it: no false "tools differ" warning.
func TestDisabledToolsHidden(t *testing.T) {
	cfg, _ := fakeServer(t, "fake", fakemcp.ModeNormal)
	cfg.DisabledTools = []string{fakemcp.ToolImage, fakemcp.ToolFail, "no_such_tool"}
	h := newHarness(t, nil, cfg)
	cats := h.client.Discover(t.Context())
	cat := cats[0].Catalog
	for _, tool := range cat.Tools {
		if tool.MCPName == fakemcp.ToolImage || tool.MCPName == fakemcp.ToolFail {
			t.Errorf("%s offered although disabled", tool.MCPName)
		}
	}
	if len(cat.Hidden) != 2 || !strings.Contains(strings.Join(cat.Warnings, "\n"), `disabledTools names "no_such_tool"`) {
		t.Errorf("hidden %q, warnings %q", cat.Hidden, cat.Warnings)
	}
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"hi"}`)
	s.Close()
	if strings.Contains(h.logs.String(), "differ from the cached catalogue") {
		t.Errorf("a false warning:\n%s", h.logs.String())
	}
	if hidden := detailOf(t, h.session(""), "fake").Hidden; !slices.Equal(hidden, []string{"fail", "image"}) {
		t.Errorf("/mcp fake hides %q", hidden)
	}
}

// The free port the shared server was given is taken by another process
// before it binds it (EADDRINUSE): it is started again on another port,
// and the chat never hears of it.
func TestSharedServerPortTakenIsRetried(t *testing.T) {
	cfg, logPath := sharedServer(t, "shared")
	marker := filepath.Join(t.TempDir(), "tried")
	// The first start fails as Node does when its port was taken; the
	// next runs the fake.
	script := `if [ ! -e "$0" ]; then : > "$0"; echo "Error: listen EADDRINUSE: address already in use 127.0.0.1:$2" >&2; exit 1; fi; exec "$@"`
	cfg.Args = append([]string{"-c", script, marker, cfg.Command}, cfg.Args...)
	cfg.Command = "/bin/sh"
	h := newHarness(t, nil, cfg)
	s := h.session("")
	if got := h.call(s, h.tool("shared", fakemcp.ToolWhoAmI), `{}`); got.IsError || got.Text() != "root: "+s.Workspace() {
		t.Fatalf("the call after a taken port = %+v", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the first start did not run: %v", err)
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 1 {
		t.Errorf("%d fake starts, want 1 (after the taken port)", n)
	}
}

// A port taken by another program between its choice and the server's
// bind is not taken for the server's: the start waits for a listener of
// the server's own tree, and starts it again on another port when it gave
// up; the other program is sent nothing.
func TestSharedServerPortTakenByAnother(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("telling a listener's owner needs /proc")
	}
	foreign, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()
	var got atomic.Int64
	go func() {
		for {
			c, err := foreign.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				got.Add(n)
			}()
		}
	}()
	cfg, _ := sharedServer(t, "shared")
	h := newHarness(t, nil, cfg)
	taken := foreign.Addr().(*net.TCPAddr).Port
	var tries atomic.Int32
	h.client.sp.hosts["shared"].freePort = func() (int, error) {
		if tries.Add(1) == 1 {
			return taken, nil
		}
		return freePort()
	}
	alice := h.session("")
	if got := h.call(alice, h.tool("shared", fakemcp.ToolWhoAmI), `{}`).Text(); got != "root: "+alice.Workspace() {
		t.Fatalf("a call: %q", got)
	}
	if n := tries.Load(); n < 2 {
		t.Errorf("%d ports tried, want the taken one and another", n)
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the other program was sent %d bytes", n)
	}
}
