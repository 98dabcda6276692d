package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// gatedEndpoint is a memEndpoint whose tool calls go through hook first.
type gatedEndpoint struct {
	*memEndpoint
	hook func(ctx context.Context, m message)
}

func (g *gatedEndpoint) roundTrip(ctx context.Context, m message, d time.Time) (reply, error) {
	if m.method == "tools/call" {
		g.hook(ctx, m)
	}
	return g.memEndpoint.roundTrip(ctx, m, d)
}

// No call of the chat runs on the connection while its state's file is in
// the workspace: a save waits for the calls in flight, and the calls that
// come meanwhile wait for the save, which removes its file before they
// run.
func TestNoCallRunsWhileTheStateIsInTheWorkspace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mcpconfig.ServerConfig{Name: "mem", Command: "/bin/true", Enabled: true, StartupTimeout: 10 * time.Second,
			CallTimeout: time.Hour, State: &mcpconfig.StateTools{Save: "save", Restore: "restore", File: "state.json"}}
		mem := &memServer{}
		h := newHarness(t, nil, cfg)
		a := h.session("")
		release := make(chan struct{})
		var mu sync.Mutex
		var events []string
		var violations []string
		h.client.sp.dial = func(ctx context.Context, cfg mcpconfig.ServerConfig, sp mcpconfig.Spawn, onExit func(), p *peer) (endpoint, error) {
			ep, err := mem.dial(ctx, cfg, sp, onExit, p)
			return &gatedEndpoint{memEndpoint: ep.(*memEndpoint), hook: func(_ context.Context, m message) {
				var args struct{ Filename, Text string }
				_ = json.Unmarshal(m.args, &args)
				temps, _ := filepath.Glob(filepath.Join(a.Workspace(), stateTempPrefix+"*"))
				mu.Lock()
				events = append(events, m.tool+" "+args.Text)
				if m.tool != "save" && len(temps) > 0 {
					violations = append(violations, m.tool+" ran beside "+temps[0])
				}
				mu.Unlock()
				if m.tool == "save" {
					<-release
					_ = os.WriteFile(filepath.Join(a.Workspace(), args.Filename), []byte(`{"saved":true}`), 0o644)
				}
			}}, err
		}
		tool := Tool{Server: "mem", MCPName: "echo", Name: "echo"}
		h.call(a, tool, `{"text":"one"}`) // the first pause saves at once: the save waits in the server
		synctest.Wait()
		done := make(chan struct{})
		go func() {
			h.call(a, tool, `{"text":"two"}`)
			close(done)
		}()
		synctest.Wait()
		mu.Lock()
		seen := slices.Clone(events)
		mu.Unlock()
		if !slices.Equal(seen, []string{"echo one", "save "}) {
			t.Errorf("while the save runs the server saw %q, want the call held back", seen)
		}
		close(release)
		<-done
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(events, []string{"echo one", "save ", "echo two"}) || len(violations) > 0 {
			t.Errorf("calls %q, violations %q", events, violations)
		}
		if b, err := os.ReadFile(filepath.Join(a.private, "state.json")); err != nil || string(b) != `{"saved":true}` {
			t.Errorf("the kept state: %q (%v)", b, err)
		}
	})
}

// What the server left at the state's name must be a regular file with one
// name, reached by no symlink, and not too large; the bot writes a restore's
// copy only at a name nothing holds, following no symlink. So a file a tool
// put there cannot make the bot read or write anything else.
func TestStateFilesFollowNothing(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"other":"chat"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(secret, filepath.Join(dir, "link.json")))
	must(os.Link(secret, filepath.Join(dir, "hard.json")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "dir.json"), 0o700))
	big, err := os.Create(filepath.Join(dir, "big.json"))
	must(err)
	must(big.Truncate(maxStateBytes + 1))
	big.Close()
	for _, name := range []string{"link.json", "hard.json", "fifo.json", "dir.json", "big.json", "missing.json"} {
		if b, err := readStateFile(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s read: %q", name, b)
		}
	}
	for _, name := range []string{"link.json", "hard.json", "dir.json"} {
		if err := writeNewFile(filepath.Join(dir, name), []byte("copy")); err == nil {
			t.Errorf("%s written over", name)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != `{"other":"chat"}` {
		t.Errorf("the file outside: %q", b)
	}
}
