package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Chromium crashes (the OOM killer picks it), and then the bot stops as
// usual before any call of the chat: the save at shutdown must not run in
// the browser @playwright/mcp relaunches, empty, and replace the chat's
// saved login with {"cookies":[],"origins":[]}. The next start still has
// the login.
func TestSharedBrowserCrashThenStopKeepsTheLogin(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	login := loginSite(t)
	dataDir := t.TempDir()
	tg := newTelegram(t)
	d := startDaemon(t, wallModel, daemonOptions{extra: env, dataDir: dataDir, tg: tg})
	d.ask(alice, "read "+login.URL+"/login?as=alice-crash-1b2c", "The H1 is: ")
	var state string
	testkit.WaitFor(t, "alice's state saved when her calls paused", 30*time.Second, func() bool {
		state = privateFile(dataDir, alice, "browser-state.json")
		b, _ := os.ReadFile(state)
		return bytes.Contains(b, []byte("alice-crash-1b2c"))
	})
	pids := browserPIDs(d)
	if len(pids) != 1 {
		t.Fatalf("%d browsers, want 1", len(pids))
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Every process of Chromium gone, its pipe to @playwright/mcp is
	// closed: the server has noticed (its next call relaunches the
	// browser) by the time the bot stops.
	testkit.WaitFor(t, "the browser to die", 10*time.Second, func() bool { return len(chromiumPIDs(d)) == 0 })
	d.stop() // the save at shutdown

	b, err := os.ReadFile(state)
	if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte("alice-crash-1b2c")) {
		t.Fatalf("alice's saved state after a crash and a stop: %.300q (%v), want her login", b, err)
	}
	d = startDaemon(t, wallModel, daemonOptions{extra: env, dataDir: dataDir, tg: tg})
	if got := d.ask(alice, "read "+login.URL+"/whoami", "The H1 is: "); got != "The H1 is: Unique heading cookie=alice-crash-1b2c storage=alice-crash-1b2c" {
		t.Errorf("after the restart alice's browser says %q, want her login", got)
	}
}

// chromiumPIDs are the live processes of the daemon's browsers: Chromium
// and its helpers.
func chromiumPIDs(d *daemon) []int {
	var pids []int
	for _, pid := range markedPIDs(ownerMark(d.dataDir)) {
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && alive(pid) && strings.Contains(strings.SplitN(string(cmd), "\x00", 2)[0], "chromium") {
			pids = append(pids, pid)
		}
	}
	return pids
}
