package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A save cut short — the disk full, here a file-size limit on the shared
// server (RLIMIT_FSIZE: @playwright/mcp's write fails with EFBIG after the
// first bytes) — must leave the last good state whole: the chat keeps the
// login it had.
func TestSharedBrowserSaveCutShortKeepsTheLogin(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	blob := strings.Repeat("x", 20000)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			http.NotFound(w, r) // a favicon's request sets no cookie
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		name := r.URL.Query().Get("as")
		http.SetCookie(w, &http.Cookie{Name: "who", Value: name, Path: "/", Expires: time.Now().Add(24 * time.Hour)})
		fmt.Fprintf(w, `<!doctype html><html><body><script>localStorage.setItem("blob", %q)</script><h1>Unique heading big %s</h1></body></html>`, blob, name)
	}))
	t.Cleanup(site.Close)
	login := loginSite(t)
	dataDir := t.TempDir()
	tg := newTelegram(t)
	d := startDaemon(t, wallModel, daemonOptions{extra: env, dataDir: dataDir, tg: tg})
	d.ask(alice, "read "+site.URL+"/big?as=alice-first-77c1", "The H1 is: ")
	var state string
	testkit.WaitFor(t, "alice's state saved", 30*time.Second, func() bool {
		state = privateFile(dataDir, alice, "browser-state.json")
		b, _ := os.ReadFile(state)
		return bytes.Contains(b, []byte("alice-first-77c1"))
	})
	good, _ := os.ReadFile(state)
	const limit = 4096 // the page snapshots fit, the state (~20 KB) not
	if len(good) <= limit {
		t.Fatalf("the saved state is %d bytes, want more than the limit", len(good))
	}
	pid := sharedServerPID(t, d)
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatal(err)
	}
	d.ask(alice, "read "+site.URL+"/big?as=alice-second-90d3", "The H1 is: ")
	d.stop() // the save at shutdown is cut at 4 KB

	b, err := os.ReadFile(state)
	if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte("alice-first-77c1")) {
		t.Fatalf("alice's saved state after a save cut short: %d bytes, valid JSON %v (%v), want the last good one (%d bytes)",
			len(b), json.Valid(b), err, len(good))
	}
	d = startDaemon(t, wallModel, daemonOptions{extra: env, dataDir: dataDir, tg: tg})
	if got := d.ask(alice, "read "+login.URL+"/whoami", "The H1 is: "); !strings.Contains(got, "cookie=alice-first-77c1") {
		t.Errorf("after the restart alice's browser says %q, want the login of the last good save", got)
	}
}

// sharedServerPID is the pid of the daemon's shared @playwright/mcp.
func sharedServerPID(t *testing.T, d *daemon) int {
	t.Helper()
	for _, pid := range markedPIDs(ownerMark(d.dataDir)) {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), "--port") && strings.Contains(string(cmdline), "playwright") {
			return pid
		}
	}
	t.Fatal("no shared server")
	return 0
}
