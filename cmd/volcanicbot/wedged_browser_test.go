package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The shared @playwright/mcp stops answering (SIGSTOP: a process that no
// longer reads its sockets): no chat is wedged. The call that meets it
// ends within seconds with the server replaced, every chat's next call
// works in a new one, /stop answers at once, /mcp restart replaces a
// stopped server within seconds, and /mcp never shows it as running.
func TestSharedBrowserWedgedIsReplaced(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	for _, chat := range []int64{alice, bob} {
		if got, took := d.read(chat, srv.URL+fmt.Sprintf("/start-%d", chat), 60*time.Second); got != fmt.Sprintf("The H1 is: Unique heading start-%d 7d3f", chat) {
			t.Fatalf("chat %d before the wedge: %q after %v", chat, got, took)
		}
	}

	// A slow page is no stopped server: the server answers its pings
	// while the call waits for the page.
	running := d.sharedPID(alice)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(12 * time.Second):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, `<!doctype html><html><body><h1>Unique heading slow 7d3f</h1></body></html>`)
	}))
	defer slow.Close()
	if got, took := d.read(alice, slow.URL+"/slow", 60*time.Second); got != "The H1 is: Unique heading slow 7d3f" {
		t.Errorf("a slow page: %q after %v", got, took)
	}
	if pid := d.sharedPID(alice); pid != running {
		t.Errorf("the shared server was replaced (%d, then %d) during a slow page's call", running, pid)
	}

	// The call that meets the stopped server ends in seconds, the server
	// replaced; the chat's and the other chat's next calls work.
	var wedged []int // the stopped processes, ended by the end
	wedge := func() int { pid := d.wedgeSharedBrowser(alice); wedged = append(wedged, pid); return pid }
	stopped := wedge()
	stoppedName, _ := serverWall(t, stopped)
	got, took := d.read(alice, srv.URL+"/wedged", 180*time.Second)
	t.Logf("the call on the stopped server answered after %v: %q", took.Round(100*time.Millisecond), got)
	if took > 25*time.Second {
		t.Errorf("the call on the stopped server took %v, want < 25 s", took)
	}
	if !strings.Contains(got, "stopped answering") {
		t.Errorf("the call on the stopped server: %q, want it to say the browser stopped answering", got)
	}
	for _, chat := range []int64{alice, bob} {
		got, took := d.read(chat, srv.URL+fmt.Sprintf("/after-%d", chat), 180*time.Second)
		t.Logf("chat %d's next call after the replacement: %v", chat, took.Round(100*time.Millisecond))
		if got != fmt.Sprintf("The H1 is: Unique heading after-%d 7d3f", chat) || took > 25*time.Second {
			t.Errorf("chat %d's next call: %q after %v, want the page within 25 s", chat, got, took)
		}
	}
	replacement := d.sharedPID(alice)
	if replacement == stopped || replacement == 0 {
		t.Errorf("/mcp playwright shows pid %d, want the new process (the stopped one was %d)", replacement, stopped)
	}
	// The new process is behind the Host wall too, with a name of its
	// own (the chats' calls above sent it).
	checkWall(t, d, replacement, stoppedName)

	// /mcp restart replaces the stopped server within seconds.
	stopped = wedge()
	stoppedName, _ = serverWall(t, stopped)
	before := len(d.tg.Sent(alice))
	start := time.Now()
	d.tg.Message(alice, alice, "/mcp restart playwright")
	d.waitTextWithin(alice, before, "restarted", 60*time.Second)
	took = time.Since(start)
	t.Logf("/mcp restart of the stopped server answered after %v", took.Round(10*time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("/mcp restart took %v, want < 5 s", took)
	}
	if pid := d.sharedPID(alice); pid == stopped {
		t.Errorf("after /mcp restart /mcp playwright shows the stopped process %d", pid)
	}
	for _, chat := range []int64{bob, alice} {
		got, took := d.read(chat, srv.URL+fmt.Sprintf("/restarted-%d", chat), 180*time.Second)
		t.Logf("chat %d's next call after /mcp restart: %v", chat, took.Round(100*time.Millisecond))
		if got != fmt.Sprintf("The H1 is: Unique heading restarted-%d 7d3f", chat) || took > 25*time.Second {
			t.Errorf("chat %d's next call after /mcp restart: %q after %v, want the page within 25 s", chat, got, took)
		}
	}
	checkWall(t, d, d.sharedPID(alice), stoppedName)
	for _, pid := range wedged {
		testkit.WaitFor(t, "the replaced processes to be ended", 30*time.Second, func() bool { return !alive(pid) })
	}

	// /stop during a call on a stopped server answers at once. (Last:
	// the browse model reads a stopped call's result as its own.)
	wedge()
	before = len(d.tg.Sent(alice))
	d.tg.Message(alice, alice, "read "+srv.URL+"/stop-me")
	testkit.WaitFor(t, "the call's progress message", 30*time.Second, func() bool {
		return strings.Contains(strings.Join(sentSince(d, alice, before), "\n"), "browser_navigate")
	})
	start = time.Now()
	d.tg.Message(alice, alice, "/stop")
	d.waitTextWithin(alice, before, "Stopped.", 30*time.Second)
	took = time.Since(start)
	t.Logf("/stop on the stopped server answered after %v", took.Round(10*time.Millisecond))
	if took > time.Second {
		t.Errorf("/stop took %v, want < 1 s", took)
	}
}

// checkWall checks that pid, the shared server's process that replaced
// the stopped one, serves only a Host name of its own: fresh (not old,
// the stopped process's), secret (in no log or chat message), and every
// other Host — its address as a page names it, localhost, the stopped
// process's name — refused.
func checkWall(t *testing.T, d *daemon, pid int, old string) {
	t.Helper()
	if pid == 0 {
		t.Error("no shared process after the replacement")
		return
	}
	name, port := serverWall(t, pid)
	if !regexp.MustCompile(`^vb-[0-9a-f]{32}\.invalid$`).MatchString(name) || name == old {
		t.Errorf("the new process's allowed host %q (the stopped one's %q), want a fresh vb-<128 random bits>.invalid", name, old)
	}
	for _, host := range []string{name, old, "127.0.0.1:" + port, "localhost:" + port, name + ":" + port} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:"+port+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if refused := resp.StatusCode == http.StatusForbidden; refused != (host != name) {
			t.Errorf("the new process answers Host %q with HTTP %d", host, resp.StatusCode)
		}
	}
	texts := strings.Join(append(d.texts(alice), d.texts(bob)...), "\n")
	for _, n := range []string{name, old} {
		if strings.Contains(d.logs.String(), n) || strings.Contains(texts, n) {
			t.Errorf("a host name of the shared server is in the log or a chat message")
		}
	}
}

// serverWall is the allowed host (PLAYWRIGHT_MCP_ALLOWED_HOSTS) and the
// port (--port) of the shared server's process pid, from /proc.
func serverWall(t *testing.T, pid int) (host, port string) {
	t.Helper()
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, "PLAYWRIGHT_MCP_ALLOWED_HOSTS="); ok {
			host = v
		}
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	if i := slices.Index(args, "--port"); i >= 0 && i+1 < len(args) {
		port = args[i+1]
	}
	if host == "" || port == "" {
		t.Fatalf("process %d: allowed host %q, port %q", pid, host, port)
	}
	return host, port
}

// read has chat read url with the browse model and returns its answer
// and how long it took.
func (d *daemon) read(chat int64, url string, within time.Duration) (string, time.Duration) {
	d.t.Helper()
	before := len(d.tg.Sent(chat))
	start := time.Now()
	d.tg.Message(chat, chat, "read "+url)
	var got string
	if !testkit.Until(within, func() bool {
		texts := sentSince(d, chat, before)
		if got = lastWithPrefix(texts, "The H1 is: "); got == "" {
			got = lastWithPrefix(texts, "no heading in: ")
		}
		return got != ""
	}) {
		d.t.Fatalf("chat %d: no answer to read %s within %v; sent %q", chat, url, within, sentSince(d, chat, before))
	}
	return got, time.Since(start)
}

// waitTextWithin waits for a message holding substr among those chat was
// sent after the first n.
func (d *daemon) waitTextWithin(chat int64, n int, substr string, within time.Duration) {
	d.t.Helper()
	if !testkit.Until(within, func() bool { return strings.Contains(strings.Join(sentSince(d, chat, n), "\n"), substr) }) {
		d.t.Fatalf("chat %d never got %q within %v; got %q", chat, substr, within, sentSince(d, chat, n))
	}
}

var sharedPIDRe = regexp.MustCompile(`shared process: pid (\d+)`)

// sharedPID is the shared server's pid as /mcp playwright shows it in
// chat (0: none shown).
func (d *daemon) sharedPID(chat int64) int {
	d.t.Helper()
	before := len(d.tg.Sent(chat))
	d.tg.Message(chat, chat, "/mcp playwright")
	d.waitTextWithin(chat, before, "playwright: ", 10*time.Second)
	m := sharedPIDRe.FindStringSubmatch(strings.Join(sentSince(d, chat, before), "\n"))
	if m == nil {
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// wedgeSharedBrowser stops the shared server's process (SIGSTOP) and
// returns its pid; the test's end lets it go on, so that it can be ended.
func (d *daemon) wedgeSharedBrowser(chat int64) int {
	d.t.Helper()
	pid := d.sharedPID(chat)
	if pid == 0 {
		d.t.Fatal("no shared process to stop")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	// The stop is asynchronous: until every thread has stopped, the
	// process may still answer.
	testkit.WaitFor(d.t, "the shared server to stop", 10*time.Second, func() bool { return stoppedProcess(pid) })
	return pid
}

// stoppedProcess reports whether every thread of pid is stopped (state T).
func stoppedProcess(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}
