package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Real-browser tests: the Playwright preset runs the pinned @playwright/mcp
// (tools/npm, installed by `make test`) driving Debian's Chromium, through
// the whole daemon. Pages come from httptest on 127.0.0.1.

func browserEnv(t testing.TB) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("real-browser test")
	}
	bin := testkit.NPMBin(t, "playwright-mcp")
	chromium := testkit.Chromium(t)
	return []string{
		"PLAYWRIGHT_ENABLED=true",
		"PLAYWRIGHT_COMMAND=" + bin,
		"PLAYWRIGHT_EXECUTABLE_PATH=" + chromium,
		"PLAYWRIGHT_NO_SANDBOX=true",
	}
}

// perChatBrowserEnv is browserEnv with a server and a browser per chat
// (PLAYWRIGHT_SHARED=false), for what is per chat: its processes, its
// profile on disk.
func perChatBrowserEnv(t testing.TB) []string {
	return append(browserEnv(t), "PLAYWRIGHT_SHARED=false")
}

// site serves pages whose H1 is unique per path.
func site(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.Trim(r.URL.Path, "/")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Page %s</title></head>
<body style="background:#f4a261"><h1>Unique heading %s 7d3f</h1><p>Some text about %s.</p></body></html>`, name, name, name)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var headingRe = regexp.MustCompile(`heading "([^"]+)"`)

// browse is a scripted model: "open URL" navigates and answers with the
// H1 from the page snapshot; "tabs" lists the tabs; "shoot URL" navigates,
// saves a screenshot to browser/shot.png and sends it; "close" closes the
// browser.
func browse(req llmtest.Request) llmtest.Reply {
	user := lastUserText(req)
	res, haveResult := toolResultText(req)
	steps := toolSteps(req)
	switch {
	case strings.HasPrefix(user, "open "):
		url := strings.TrimPrefix(user, "open ")
		switch steps {
		case 0:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
		case 1:
			if m := headingRe.FindStringSubmatch(res); m != nil {
				return call("browser_tabs", `{"action":"list"}`)
			}
			return llmtest.Text("no heading in: " + res)
		default:
			return llmtest.Text("tabs: " + res)
		}
	case strings.HasPrefix(user, "read "):
		url := strings.TrimPrefix(user, "read ")
		if !haveResult {
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
		}
		if m := headingRe.FindStringSubmatch(res); m != nil {
			return llmtest.Text("The H1 is: " + m[1])
		}
		return llmtest.Text("no heading in: " + res)
	case user == "close":
		if !haveResult {
			return call("browser_close", `{}`)
		}
		return llmtest.Text("closed: " + res)
	case strings.HasPrefix(user, "shoot "):
		url := strings.TrimPrefix(user, "shoot ")
		switch steps {
		case 0:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
		case 1:
			return call("browser_take_screenshot", `{"filename":"browser/shot.png"}`)
		case 2:
			return call("send", `{"path":"browser/shot.png","caption":"the page"}`)
		default:
			return llmtest.Text("done: " + res)
		}
	}
	return llmtest.Text("?")
}

// toolSteps counts the tool results since the user's last own message.
func toolSteps(req llmtest.Request) int {
	n := 0
	msgs, _ := req.JSON["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		if m["role"] == "tool" {
			n++
			continue
		}
		if m["role"] == "assistant" {
			continue
		}
		if m["role"] == "user" {
			// OpenAI: a user message after tool messages may carry images;
			// it is not the user's own unless no tool result precedes it.
			if i > 0 && msgs[i-1].(map[string]any)["role"] == "tool" {
				continue
			}
		}
		break
	}
	return n
}

// chatPID reads the playwright process's pid from /mcp playwright.
func (d *daemon) chatPID(chat int64) int {
	d.t.Helper()
	before := len(d.tg.Sent(chat))
	d.tg.Message(chat, chat, "/mcp playwright")
	msgs := d.waitSent(chat, before+1)
	m := regexp.MustCompile(`pid: (\d+)`).FindStringSubmatch(msgs[len(msgs)-1].Text)
	if m == nil {
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestBrowserNavigateAndRead(t *testing.T) {
	env := browserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "read "+srv.URL+"/alpha")
	d.waitText(alice, "The H1 is: Unique heading alpha 7d3f")
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "playwright: running")
}

func TestBrowserScreenshotIsSentAsPhoto(t *testing.T) {
	env := browserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "shoot "+srv.URL+"/shot")
	d.waitText(alice, "done: ")
	photos := d.tg.RequestsFor("sendPhoto")
	if len(photos) != 1 {
		t.Fatalf("%d sendPhoto requests; chat: %q", len(photos), d.texts(alice))
	}
	data := photos[0].Files["photo"].Data
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the photo is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
		t.Errorf("screenshot is %v", b)
	}
	// The page's background colour shows: it is a screenshot of the page.
	r, g, bl, _ := img.At(img.Bounds().Dx()-5, img.Bounds().Dy()-5).RGBA()
	if r>>8 != 0xf4 || g>>8 != 0xa2 || bl>>8 != 0x61 {
		t.Errorf("corner pixel %02x%02x%02x, want the page background f4a261", r>>8, g>>8, bl>>8)
	}
	shot := filepath.Join(d.dataDir, "chats", fmt.Sprint(alice), "browser", "shot.png")
	if _, err := os.Stat(shot); err != nil {
		t.Errorf("the screenshot is not in the workspace: %v", err)
	}
}

func TestBrowserTwoChatsKeepTheirOwnTabs(t *testing.T) {
	env := perChatBrowserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "open "+srv.URL+"/alice-page")
	d.tg.Message(bob, bob, "open "+srv.URL+"/bob-page")
	d.waitText(alice, "tabs: ")
	d.waitText(bob, "tabs: ")
	for chat, mine := range map[int64]string{alice: "alice-page", bob: "bob-page"} {
		var tabs string
		for _, s := range d.texts(chat) {
			if strings.HasPrefix(s, "tabs: ") {
				tabs = s
			}
		}
		other := "bob-page"
		if mine == other {
			other = "alice-page"
		}
		if !strings.Contains(tabs, mine) || strings.Contains(tabs, other) {
			t.Errorf("chat %d tabs: %q", chat, tabs)
		}
	}
	if d.chatPID(alice) == d.chatPID(bob) {
		t.Error("two chats share one browser process")
	}
}

func TestBrowserRestartAndNew(t *testing.T) {
	env := perChatBrowserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "read "+srv.URL+"/one")
	d.waitText(alice, "The H1 is: Unique heading one")
	first := d.chatPID(alice)
	if first == 0 {
		t.Fatal("no pid in /mcp playwright")
	}
	d.tg.Message(alice, alice, "/mcp restart playwright")
	d.waitText(alice, "restarted")
	if alive(first) {
		t.Errorf("pid %d survived /mcp restart", first)
	}
	d.tg.Message(alice, alice, "read "+srv.URL+"/two")
	d.waitText(alice, "The H1 is: Unique heading two")
	second := d.chatPID(alice)
	if second == 0 || second == first {
		t.Errorf("after restart: pid %d (before %d)", second, first)
	}

	profile := filepath.Join(d.dataDir, "private", fmt.Sprint(alice), "browser-profile")
	d.tg.Message(alice, alice, "/new")
	d.waitText(alice, "New conversation")
	if alive(second) {
		t.Errorf("the browser server %d survived /new", second)
	}
	if n := countMarked(d); n != 0 {
		t.Errorf("%d processes of the chat's browser remain after /new", n)
	}
	if fi, err := os.Stat(profile); err != nil || !fi.IsDir() {
		t.Errorf("the browser profile did not survive /new: %v", err)
	}
}

func TestBrowserShutdownLeavesNoProcess(t *testing.T) {
	env := browserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "read "+srv.URL+"/bye")
	d.waitText(alice, "The H1 is:")
	if n := countMarked(d); n < 2 {
		t.Fatalf("only %d marked processes while a browser runs", n)
	}
	d.stop()
	testkit.WaitFor(t, "every browser process to end", 5*time.Second, func() bool { return countMarked(d) == 0 })
}

// countMarked counts the live processes that carry this daemon's owner
// mark: its MCP servers, node, Chromium and its helpers.
func countMarked(d *daemon) int {
	return len(markedPIDs(ownerMark(d.dataDir)))
}

var markedPIDs = mcpclient.MarkedProcesses

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// The real binary, killed with SIGKILL while a browser runs: whatever
// survives it is ended by the next start — a browser per chat, and the
// shared browser.
func TestBrowserSurvivorsOfSIGKILLAreReapedAtStart(t *testing.T) {
	for _, shared := range []string{"false", "true"} {
		t.Run("shared="+shared, func(t *testing.T) {
			survivorsOfSIGKILL(t, append(browserEnv(t), "PLAYWRIGHT_SHARED="+shared))
		})
	}
}

func survivorsOfSIGKILL(t *testing.T, env []string) {
	srv := site(t)
	binary := buildBinary(t)
	tg := telegramtest.New(t)
	model := llmtest.NewOpenAI(t)
	for range 20 {
		model.Push(llmtest.Func(browse))
	}
	dataDir := t.TempDir()
	environ := append(os.Environ(),
		"TELEGRAM_BOT_TOKEN="+tg.Token(), "TELEGRAM_API_URL="+tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", alice),
		"VOLCANIC_DATA_DIR="+dataDir, "VOLCANIC_AGENT_DIR="+t.TempDir(),
		"LLM_PROVIDER=openai", "LLM_MODEL=test", "OPENAI_API_KEY=sk-x-0123456789", "OPENAI_BASE_URL="+model.URL,
		"LOG_FORMAT=json")
	environ = append(environ, env...)
	start := func() (*exec.Cmd, *testkit.SyncBuffer) {
		cmd := exec.Command(binary, "run")
		cmd.Env = environ
		logs := &testkit.SyncBuffer{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd, logs
	}
	owner := ownerMark(dataDir)

	first, logs := start()
	// The first message of a fresh data directory waits a few seconds at
	// most for the browser's tools: this test needs them.
	testkit.WaitFor(t, "the browser's tools", 60*time.Second, func() bool { return strings.Contains(logs.String(), "MCP catalogue ready") })
	tg.Message(alice, alice, "read "+srv.URL+"/crash")
	if err := tg.WaitUntil(func() bool { return containsText(tg.Texts(alice), "The H1 is:") }, 30*time.Second); err != nil {
		t.Fatalf("no answer from the first run: %q", tg.Texts(alice))
	}
	if n := len(markedPIDs(owner)); n < 2 {
		t.Fatalf("only %d marked processes while the browser runs", n)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	survivors := markedPIDs(owner)
	t.Logf("%d processes survived SIGKILL of the bot", len(survivors))

	second, _ := start()
	testkit.WaitFor(t, "the second run to end the survivors", 15*time.Second, func() bool {
		for _, pid := range survivors {
			if alive(pid) {
				return false
			}
		}
		return true
	})
	// The conversation survived SIGKILL: the next request carries it.
	before := len(model.Requests())
	tg.Message(alice, alice, "read "+srv.URL+"/after")
	testkit.WaitFor(t, "the answer after the restart", 30*time.Second, func() bool {
		return containsText(tg.Texts(alice), "Unique heading after")
	})
	if reqs := model.Requests(); len(reqs) <= before || !strings.Contains(string(reqs[before].Body), srv.URL+"/crash") {
		t.Error("the conversation before SIGKILL is missing from the first request after the restart")
	}
	_ = second.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the bot did not exit within 10 s of SIGTERM")
	}
	if left := markedPIDs(owner); len(left) != 0 {
		t.Errorf("processes left after SIGTERM: %v", left)
	}
}

func containsText(texts []string, s string) bool {
	for _, x := range texts {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// A redeploy (Coolify recreates the container: a new hostname, the same
// volume) finds the chat's browser profile locked by a browser of the old
// container. The bot stops browsers gracefully, so Chromium removes its
// lock itself; and a lock a killed browser of another host left in a
// profile the bot owns is cleared before the next start, so the chat
// browses instead of failing with "Browser is already in use".
func TestBrowserProfileLockOfAnotherHostIsCleared(t *testing.T) {
	env := perChatBrowserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "read "+srv.URL+"/before")
	d.waitText(alice, "The H1 is: Unique heading before")
	profile := filepath.Join(d.dataDir, "private", fmt.Sprint(alice), "browser-profile")
	lock := filepath.Join(profile, "SingletonLock")
	target, err := os.Readlink(lock)
	if err != nil {
		t.Fatalf("no SingletonLock while the browser runs: %v", err)
	}
	d.tg.Message(alice, alice, "/mcp restart playwright")
	d.waitText(alice, "restarted")
	if _, err := os.Lstat(lock); err == nil {
		t.Errorf("the profile is still locked after a graceful stop: Chromium was not given time to shut down")
	}

	// What a browser killed in the old container leaves behind.
	host, _, _ := strings.Cut(target, "-")
	for _, name := range []string{"SingletonLock", "SingletonCookie", "SingletonSocket"} {
		_ = os.Remove(filepath.Join(profile, name))
	}
	if err := os.Symlink("old-container-"+host+"-4242", lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/tmp/org.chromium.Chromium.gone/SingletonSocket", filepath.Join(profile, "SingletonSocket")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("1234567890123456789", filepath.Join(profile, "SingletonCookie")); err != nil {
		t.Fatal(err)
	}
	d.tg.Message(alice, alice, "read "+srv.URL+"/after")
	d.waitText(alice, "Unique heading after")
}

// check starts the browser once: listing the tools starts none, so a
// browser that cannot start used to pass check and fail the first chat's
// first call. A user's PLAYWRIGHT_EXTRA_ARGS adds to what the deployment
// set; it no longer replaces the executable path and the sandbox switch.
func TestCheckStartsTheBrowser(t *testing.T) {
	env := browserEnv(t)
	run1 := func(extra ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		environ := append(append(baseEnviron(t, t.TempDir()), env...), extra...)
		code := run(context.Background(), []string{"check"}, &out, &errOut, environ)
		return code, out.String()
	}
	if code, out := run1("PLAYWRIGHT_EXTRA_ARGS=--isolated"); code != 0 || !strings.Contains(out, "browser: ok (opened about:blank)") {
		t.Errorf("with the deployment's settings and the user's --isolated: exit %d\n%s", code, out)
	}
	var withoutPath []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PLAYWRIGHT_EXECUTABLE_PATH=") {
			withoutPath = append(withoutPath, kv)
		}
	}
	env = withoutPath
	code, out := run1("HOME=" + t.TempDir()) // no browser of Playwright's own there
	if code != 1 || !strings.Contains(out, "failed: playwright: the browser does not start") ||
		!strings.Contains(out, "PLAYWRIGHT_EXECUTABLE_PATH") || !strings.Contains(out, "is not installed") {
		t.Errorf("without a browser: exit %d\n%s", code, out)
	}
}

// Three chats browse at once with PLAYWRIGHT_MAX_BROWSERS=2: never more
// than two browser servers live, and every chat is answered (one waits, or
// takes an idle one's place).
func TestBrowserCeiling(t *testing.T) {
	env := perChatBrowserEnv(t)
	srv := site(t)
	const carol = int64(300)
	d := startDaemon(t, browse, daemonOptions{extra: append(env, "PLAYWRIGHT_MAX_BROWSERS=2",
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d,%d,%d", alice, bob, carol))})
	owner := ownerMark(d.dataDir)
	stop := make(chan struct{})
	peak := make(chan int, 1)
	go func() {
		most := 0
		for {
			servers := map[int]int{} // pid → parent
			for _, pid := range markedPIDs(owner) {
				comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
				if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.TrimSpace(string(comm)) == "node" &&
					strings.Contains(string(cmd), "playwright-mcp") && strings.Contains(string(cmd), "/chats/") {
					servers[pid] = parentPID(pid) // a chat's browser server (its Chromium has processes of its own)
				}
			}
			n := 0
			for _, parent := range servers {
				if _, forked := servers[parent]; !forked { // not a server's child between fork and exec
					n++
				}
			}
			most = max(most, n)
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	for _, chat := range []int64{alice, bob, carol} {
		d.tg.Message(chat, chat, fmt.Sprintf("read %s/page-%d", srv.URL, chat))
	}
	for _, chat := range []int64{alice, bob, carol} {
		d.waitText(chat, fmt.Sprintf("The H1 is: Unique heading page-%d", chat))
	}
	close(stop)
	if most := <-peak; most > 2 {
		t.Errorf("%d browser servers were live at once, over the ceiling of 2", most)
	}
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "of 2 live across chats")
}

// parentPID is pid's parent from /proc/<pid>/stat, or 0.
func parentPID(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}
