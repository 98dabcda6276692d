package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// loginSite serves /login?as=NAME, which sets a cookie and a local-storage
// entry (a login, as sites keep it), and /whoami, whose H1 says what the
// browser sent and kept: "Unique heading cookie=NAME storage=NAME".
func loginSite(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/login":
			name := r.URL.Query().Get("as")
			http.SetCookie(w, &http.Cookie{Name: "who", Value: name, Path: "/", Expires: time.Now().Add(24 * time.Hour)})
			fmt.Fprintf(w, `<!doctype html><html><body><script>localStorage.setItem("who", %q)</script><h1>Unique heading logged in %s</h1></body></html>`, name, name)
		case "/whoami":
			cookie := "none"
			if c, err := r.Cookie("who"); err == nil {
				cookie = c.Value
			}
			fmt.Fprintf(w, `<!doctype html><html><body><h1 id="h">Unique heading cookie=%s storage=?</h1>
<script>document.getElementById("h").textContent = "Unique heading cookie=%s storage=" + (localStorage.getItem("who") || "none")</script></body></html>`, cookie, cookie)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// One browser for every chat (PLAYWRIGHT_SHARED): each chat has its own
// tabs, cookies and storage, and keeps its login across /mcp restart,
// /new and a restart of the bot.
func TestSharedBrowserChatsApartLoginsKept(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	srv := site(t)
	login := loginSite(t)
	dataDir := t.TempDir()
	tg := newTelegram(t)
	d := startDaemon(t, browse, daemonOptions{extra: env, dataDir: dataDir, tg: tg})

	chatsApart(t, d, srv.URL, login.URL)
	whoami := func(step string) {
		t.Helper()
		before := len(d.tg.Sent(alice))
		d.tg.Message(alice, alice, "read "+login.URL+"/whoami")
		var got []string
		testkit.WaitFor(t, "alice's answer", 60*time.Second, func() bool {
			got = sentSince(d, alice, before)
			return lastWithPrefix(got, "The H1 is: ") != "" || lastWithPrefix(got, "no heading in: ") != ""
		})
		if !contains(got, "The H1 is: Unique heading cookie=alice storage=alice") {
			t.Errorf("%s: alice's browser says %q, want her cookie and storage", step, got)
		}
	}
	whoami("in the same context")

	d.tg.Message(alice, alice, "/mcp playwright")
	d.waitText(alice, "shared process: pid ")
	d.tg.Message(alice, alice, "/mcp restart playwright")
	d.waitText(alice, "restarted")
	whoami("after /mcp restart")
	d.tg.Message(alice, alice, "/new")
	d.waitText(alice, "New conversation")
	whoami("after /new")
	d.tg.Message(alice, alice, "close")
	d.waitText(alice, "closed: ")
	whoami("after browser_close")
	state := filepath.Join(dataDir, "private", strconv.FormatInt(alice, 10), "browser-state.json")
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), `"who"`) {
		t.Errorf("alice's saved state %s: %.200s (%v)", state, b, err)
	}

	d.stop() // SIGTERM: the state is saved
	d = startDaemon(t, browse, daemonOptions{extra: env, dataDir: dataDir, tg: tg})
	whoami("after a restart of the bot")
	if n := countBrowsers(t, d); n != 1 {
		t.Errorf("%d browsers run for two chats, want one shared", n)
	}
}

// PLAYWRIGHT_CDP_ENDPOINT: every chat uses a browser that runs elsewhere,
// a context each; no browser is launched here. A CDP endpoint that is
// down gives the chat and check a clear error naming it.
func TestCDPEndpoint(t *testing.T) {
	env := browserEnv(t)
	chromium := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PLAYWRIGHT_EXECUTABLE_PATH="); ok {
			chromium = v
		}
	}
	profile := t.TempDir()
	sidecar := exec.Command(chromium, "--headless", "--no-sandbox", "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "--no-first-run", "about:blank")
	if err := sidecar.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sidecar.Process.Kill(); _ = sidecar.Wait() })
	var endpoint string
	testkit.WaitFor(t, "the sidecar's DevTools port", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, _, ok := strings.Cut(string(b), "\n"); err == nil && ok {
			endpoint = "http://127.0.0.1:" + port
			return true
		}
		return false
	})
	srv := site(t)
	login := loginSite(t)
	d := startDaemon(t, browse, daemonOptions{extra: append(env, "PLAYWRIGHT_CDP_ENDPOINT="+endpoint)})
	chatsApart(t, d, srv.URL, login.URL)
	if n := countBrowsers(t, d); n != 0 {
		t.Errorf("%d browsers launched by the bot, want none (the sidecar's only)", n)
	}

	// The endpoint goes away: the chat hears of it, naming it.
	_ = sidecar.Process.Kill()
	_ = sidecar.Wait()
	d.tg.Message(alice, alice, "/mcp restart playwright")
	d.waitText(alice, "restarted")
	d.tg.Message(alice, alice, "read "+srv.URL+"/after")
	d.waitText(alice, "no heading in: ")
	if got := lastWithPrefix(d.texts(alice), "no heading in: "); !strings.Contains(got, strings.TrimPrefix(endpoint, "http://")) {
		t.Errorf("with the endpoint down the chat got %q, which does not name %s", got, endpoint)
	}

	code, out := checkOutput(t, append(env, "PLAYWRIGHT_CDP_ENDPOINT="+endpoint))
	if code != 1 || !strings.Contains(out, "the browser at PLAYWRIGHT_CDP_ENDPOINT "+endpoint+" does not open a page") {
		t.Errorf("check with the endpoint down: exit %d\n%s", code, out)
	}
}

// chatsApart has alice and bob open a page each and alice log in: each
// sees only its own tab, and bob not alice's cookie nor storage.
func chatsApart(t *testing.T, d *daemon, site, login string) {
	t.Helper()
	d.tg.Message(alice, alice, "open "+site+"/alice-page")
	d.tg.Message(bob, bob, "open "+site+"/bob-page")
	d.waitText(alice, "tabs: ")
	d.waitText(bob, "tabs: ")
	for chat, mine := range map[int64]string{alice: "alice-page", bob: "bob-page"} {
		other := map[string]string{"alice-page": "bob-page", "bob-page": "alice-page"}[mine]
		tabs := lastWithPrefix(d.texts(chat), "tabs: ")
		if !strings.Contains(tabs, mine) || strings.Contains(tabs, other) {
			t.Errorf("chat %d tabs: %q", chat, tabs)
		}
	}
	d.tg.Message(alice, alice, "read "+login+"/login?as=alice")
	d.waitText(alice, "The H1 is: Unique heading logged in alice")
	d.tg.Message(bob, bob, "read "+login+"/whoami")
	d.waitText(bob, "The H1 is: Unique heading cookie=none storage=none")
}

// sentSince is the texts of the messages the bot sent chat after the
// first n it sent (deleted ones included in n: a progress message deleted
// meanwhile does not shift what is new), those still shown.
func sentSince(d *daemon, chat int64, n int) []string {
	var out []string
	sent := d.tg.Sent(chat)
	for _, m := range sent[min(n, len(sent)):] {
		if m.Method == "sendMessage" && !m.Deleted {
			out = append(out, m.Text)
		}
	}
	return out
}

func lastWithPrefix(texts []string, prefix string) string {
	var last string
	for _, s := range texts {
		if strings.HasPrefix(s, prefix) {
			last = s
		}
	}
	return last
}

func contains(texts []string, want string) bool {
	for _, s := range texts {
		if s == want {
			return true
		}
	}
	return false
}

// countBrowsers counts the browsers the daemon's processes started.
func countBrowsers(t *testing.T, d *daemon) int {
	t.Helper()
	return len(browserPIDs(d))
}

// browserPIDs are the browsers the daemon's processes started: Chromium's
// main processes (no --type; its crash handlers are not).
func browserPIDs(d *daemon) []int {
	var pids []int
	for _, pid := range markedPIDs(ownerMark(d.dataDir)) {
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Fields(strings.ReplaceAll(string(cmd), "\x00", " "))
		if len(args) > 0 && filepath.Base(args[0]) == "chromium" && !strings.Contains(string(cmd), "--type=") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// checkOutput runs `volcanicbot check` with the test's base environment.
func checkOutput(t *testing.T, extra []string) (int, string) {
	t.Helper()
	var out, errOut strings.Builder
	environ := append(baseEnviron(t, t.TempDir()), extra...)
	code := run(t.Context(), []string{"check"}, &out, &errOut, environ)
	return code, out.String() + errOut.String()
}

// The shared browser crashes (the kernel's OOM killer picks Chromium):
// the chat's next call reports it, and the one after opens a new context
// in a new browser, with the chat's saved state.
func TestSharedBrowserCrashIsReportedThenRespawned(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	srv := site(t)
	login := loginSite(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "read "+login.URL+"/login?as=alice")
	d.waitText(alice, "The H1 is: Unique heading logged in alice")
	state := filepath.Join(d.dataDir, "private", strconv.FormatInt(alice, 10), "browser-state.json")
	testkit.WaitFor(t, "alice's state saved when her calls paused", 20*time.Second, func() bool {
		b, _ := os.ReadFile(state)
		return strings.Contains(string(b), `"who"`)
	})
	pids := browserPIDs(d)
	if len(pids) != 1 {
		t.Fatalf("%d browsers, want 1", len(pids))
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the browser to die", 10*time.Second, func() bool { return !alive(pids[0]) })
	answered := func(before int) string {
		var got string
		testkit.WaitFor(t, "alice's answer", 60*time.Second, func() bool {
			texts := sentSince(d, alice, before)
			got = lastWithPrefix(texts, "The H1 is: ") + lastWithPrefix(texts, "no heading in: ")
			return got != ""
		})
		return got
	}
	before := len(d.tg.Sent(alice))
	d.tg.Message(alice, alice, "read "+srv.URL+"/two")
	first := answered(before)
	before = len(d.tg.Sent(alice))
	d.tg.Message(alice, alice, "read "+srv.URL+"/three")
	if second := answered(before); second != "The H1 is: Unique heading three 7d3f" {
		t.Errorf("after the crash: %q, then %q; want the browser back by the second call", first, second)
	}
	if !strings.Contains(allToolResults(d), "Note: the browser had stopped") && !strings.Contains(first, "has been closed") {
		t.Errorf("the model was not told the browser had stopped: %q", first)
	}
	before = len(d.tg.Sent(alice))
	d.tg.Message(alice, alice, "read "+login.URL+"/whoami")
	if got := answered(before); got != "The H1 is: Unique heading cookie=alice storage=alice" {
		t.Errorf("after the crash alice's browser says %q, want her login (saved when her calls paused)", got)
	}
}

// The ceiling holds for the shared browser too, counting the chats'
// contexts: three chats browse at once under PLAYWRIGHT_MAX_BROWSERS=2 and
// every one is answered.
func TestSharedBrowserCeiling(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true", "PLAYWRIGHT_MAX_BROWSERS=2")
	srv := site(t)
	const carol = int64(300)
	d := startDaemon(t, browse, daemonOptions{extra: append(env, fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d,%d,%d", alice, bob, carol))})
	for _, chat := range []int64{alice, bob, carol} {
		d.tg.Message(chat, chat, fmt.Sprintf("read %s/page-%d", srv.URL, chat))
	}
	for _, chat := range []int64{alice, bob, carol} {
		d.waitText(chat, fmt.Sprintf("The H1 is: Unique heading page-%d", chat))
	}
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "of 2 live across chats")
	if n := countBrowsers(t, d); n != 1 {
		t.Errorf("%d browsers, want the one shared", n)
	}
}

// allToolResults is the text of the tool results the model was sent.
func allToolResults(d *daemon) string {
	var b strings.Builder
	for _, req := range d.model.Requests() {
		res, _ := toolResultText(req)
		b.WriteString(res)
	}
	return b.String()
}
