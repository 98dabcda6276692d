package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The first message after a start is answered within seconds whatever the
// servers do: a server that never answers (its startup timeout 15 s) holds
// a turn up for the turn's few seconds at most. After a restart the tools
// of a server discovered by an earlier run are offered at once, from the
// list kept in the data directory, before its discovery has ended; once
// that discovery fails (the server no longer answers) the next turn no
// longer offers them.
func TestE2EFirstMessageDoesNotWaitForDiscovery(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hang")
	fake := fakemcp.Command(fakemcp.ModeNormal)
	flaky := map[string]any{"command": "/bin/sh", "toolPrefix": "flaky_", "env": fake.Env, "startupTimeoutSeconds": 5,
		"args": []string{"-c", `if [ -e "$0" ]; then exec sleep 1000; fi; exec "$@"`, marker, fake.Command}}
	hung := map[string]any{"command": "/bin/sleep", "args": []string{"1000"}, "startupTimeoutSeconds": 15}

	type seen struct {
		at            time.Time
		body          string
		flakyFailedBy bool // the log said flaky's discovery failed before the request
	}
	var (
		mu      sync.Mutex
		byText  = map[string]seen{}
		running atomic.Pointer[daemon]
	)
	model := func(req llmtest.Request) llmtest.Reply {
		failed := strings.Contains(running.Load().logs.String(), `"msg":"MCP server discovery failed","component":"mcp","server":"flaky"`)
		mu.Lock()
		byText[lastUserText(req)] = seen{at: time.Now(), body: string(req.Body), flakyFailedBy: failed}
		mu.Unlock()
		return llmtest.Text("hi there")
	}
	request := func(text string) seen {
		mu.Lock()
		defer mu.Unlock()
		s, ok := byText[text]
		if !ok {
			t.Fatalf("no model request for %q", text)
		}
		return s
	}
	defaultWait := func(m *Main) { m.DiscoveryWait = 0 } // session.DefaultDiscoveryWait
	dataDir := t.TempDir()
	tg := newTelegram(t)

	d := startDaemon(t, model, daemonOptions{dataDir: dataDir, tg: tg, main: defaultWait,
		servers: map[string]any{"flaky": flaky, "hung": hung}})
	running.Store(d)
	sent := time.Now()
	d.tg.Message(alice, alice, "hello")
	d.waitText(alice, "hi there")
	waited := request("hello").at.Sub(sent)
	t.Logf("the first message's model request came %v after it was sent", waited.Round(10*time.Millisecond))
	if waited > 10*time.Second {
		t.Errorf("the first message waited %v for the servers' discoveries, want a few seconds", waited)
	}
	kept := filepath.Join(dataDir, mcpCatalogDir, "flaky.tools.json")
	testkit.WaitFor(t, "flaky's tool list kept in the data directory", 30*time.Second, func() bool {
		_, err := os.Stat(kept)
		return err == nil
	})
	d.stop()

	// Restarted: flaky no longer answers; its kept tools are offered
	// while its discovery runs, and not after it failed.
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, model, daemonOptions{dataDir: dataDir, tg: tg, main: defaultWait, servers: map[string]any{"flaky": flaky}})
	running.Store(d)
	before := len(d.tg.Sent(alice))
	sent = time.Now()
	d.tg.Message(alice, alice, "hello again")
	d.waitTextWithin(alice, before, "hi there", 20*time.Second)
	again := request("hello again")
	t.Logf("after the restart the model request came %v after the message", again.at.Sub(sent).Round(10*time.Millisecond))
	if !strings.Contains(again.body, "flaky_echo") || again.flakyFailedBy {
		t.Errorf("the first request after the restart (flaky's discovery failed before it: %v) does not offer flaky's kept tools",
			again.flakyFailedBy)
	}
	d.waitLog(`"msg":"MCP server discovery failed","component":"mcp","server":"flaky"`)
	d.tg.Message(alice, alice, "and now")
	testkit.WaitFor(t, "the model request for the next message", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		_, ok := byText["and now"]
		return ok
	})
	if now := request("and now"); strings.Contains(now.body, "flaky_echo") {
		t.Error("the turn after flaky's discovery failed still offers its tools")
	}
}
