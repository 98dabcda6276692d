package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The chat's disk budget (CHAT_DISK_BUDGET_MB): what the bot and its
// servers generate in a chat's folders — the browser's own files, results
// saved over the cap, archived conversations — is pruned oldest first to
// stay within it, and a page that writes its console without end is
// stopped.

// floodSite serves /flood, a page that writes to its console without end
// (as fast as the browser lets it), /big?kb=N, a page whose snapshot is
// about N KB, and any other path a small page with a unique H1.
func floodSite(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/flood":
			fmt.Fprint(w, `<!doctype html><html><body><h1>Unique heading flood</h1><script>
let i = 0;
setInterval(() => {
  for (let k = 0; k < 10; k++) console.log("flood line " + (i++) + " " + "x".repeat(2000));
}, 10);
</script></body></html>`)
		case "/big":
			kb, _ := strconv.Atoi(r.URL.Query().Get("kb"))
			var b strings.Builder
			b.WriteString(`<!doctype html><html><body><h1>Unique heading big</h1><ul>`)
			for i := range kb * 1024 / 48 { // a snapshot line is about 48 bytes
				fmt.Fprintf(&b, "<li>item %07d of the big page</li>", i)
			}
			b.WriteString(`</ul></body></html>`)
			fmt.Fprint(w, b.String())
		default:
			name := strings.Trim(r.URL.Path, "/")
			fmt.Fprintf(w, `<!doctype html><html><body><h1>Unique heading %s</h1></body></html>`, name)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chatFiles is the size and count of the files of chat's workspace that
// the bot and its servers generate: everything but the user's uploads
// (the bot's private state of the chat is beside the workspace).
func chatFiles(t testing.TB, dataDir string, chatID int64) (size int64, files int) {
	t.Helper()
	ws := chatdir.New(dataDir).Workspace(chat.In(chatID))
	_ = filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "uploads" && path != ws {
			return filepath.SkipDir
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			files++
		}
		return nil
	})
	return size, files
}

// filesLike counts the files of chat's workspace (any folder) whose names
// match pattern, and their size.
func filesLike(dataDir string, chatID int64, pattern string) (n int, size int64) {
	ws := chatdir.New(dataDir).Workspace(chat.In(chatID))
	_ = filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok {
			if fi, err := d.Info(); err == nil {
				n++
				size += fi.Size()
			}
		}
		return nil
	})
	return n, size
}

const mb = 1 << 20

// A page that floods its console, visited once: with no call in flight,
// the log it writes in the chat's workspace is cut and then, as it goes
// on, the chat's browser is closed (its state saved) and the chat told;
// the browser works again at the next call.
func TestBrowserConsoleFloodIsStopped(t *testing.T) {
	for _, shared := range []string{"true", "false"} {
		t.Run("shared="+shared, func(t *testing.T) {
			env := append(browserEnv(t), "PLAYWRIGHT_SHARED="+shared)
			srv := floodSite(t)
			d := startDaemon(t, browse, daemonOptions{extra: env})
			d.tg.Message(alice, alice, "read "+srv.URL+"/flood")
			testkit.WaitFor(t, "the answer", 60*time.Second, func() bool { return contains(d.texts(alice), "The H1 is: Unique heading flood") })
			before := len(d.tg.Sent(alice))
			start := time.Now()
			size0, _ := chatFiles(t, d.dataDir, alice)
			var peak, size int64
			var told string
			next := start.Add(10 * time.Second)
			// Until the chat is told, the chat's files are sampled for
			// their peak (and logged every 10 s).
			stopped := testkit.Until(90*time.Second, func() bool {
				var files int
				size, files = chatFiles(t, d.dataDir, alice)
				peak = max(peak, size)
				if now := time.Now(); now.After(next) {
					t.Logf("%4.0f s after the answer: %6.1f MB in %d generated files (%.1f MB/min)", now.Sub(start).Seconds(),
						float64(size)/mb, files, float64(size-size0)/mb/now.Sub(start).Minutes())
					next = now.Add(10 * time.Second)
				}
				for _, s := range sentSince(d, alice, before) {
					if strings.Contains(s, "closed this chat's browser") {
						told = s
					}
				}
				return told != ""
			})
			if !stopped {
				t.Fatalf("with no call in flight the chat's files grew from %.1f MB to %.1f MB in %.0f s (%.1f MB/min), "+
					"and the chat was never told its browser was stopped; it got %q",
					float64(size0)/mb, float64(size)/mb, time.Since(start).Seconds(),
					float64(size-size0)/mb/time.Since(start).Minutes(), sentSince(d, alice, before))
			}
			elapsed := time.Since(start)
			size, files := chatFiles(t, d.dataDir, alice)
			t.Logf("stopped after %.1f s: peak %.1f MB, now %.1f MB in %d files; the chat read %q",
				elapsed.Seconds(), float64(peak)/mb, float64(size)/mb, files, told)
			if peak > 64*mb {
				t.Errorf("the flood reached %.1f MB before it was stopped, want under 64 MB", float64(peak)/mb)
			}
			d.tg.Message(alice, alice, "/mcp playwright")
			d.waitText(alice, "playwright: not started")
			// The chat's browser works again.
			d.tg.Message(alice, alice, "read "+srv.URL+"/after")
			d.waitText(alice, "The H1 is: Unique heading after")
		})
	}
}

// Eight loads of a page whose snapshot is about 1.25 MB, under a budget
// of 2 MB: the snapshots the browser saves are pruned oldest first, the
// last one stays. (The page made 2.5 MB snapshots under a 4 MB
// budget; half the size keeps the same ratio, and a load under -race in
// the whole suite took over two minutes at that size.)
func TestBrowserSnapshotsStayWithinTheBudget(t *testing.T) {
	const budget = 2
	env := append(browserEnv(t), fmt.Sprintf("CHAT_DISK_BUDGET_MB=%d", budget))
	srv := floodSite(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	for i := range 8 {
		before := len(d.tg.Sent(alice))
		d.tg.Message(alice, alice, fmt.Sprintf("read %s/big?kb=1024&load=%d", srv.URL, i))
		testkit.WaitFor(t, "the answer", 3*time.Minute, func() bool {
			return lastWithPrefix(sentSince(d, alice, before), "The H1 is: ") != ""
		})
	}
	n, snaps := filesLike(d.dataDir, alice, "page-*.yml")
	size, files := chatFiles(t, d.dataDir, alice)
	t.Logf("after 8 loads: %d page snapshots of %.2f MB; %.2f MB in %d generated files", n, float64(snaps)/mb, float64(size)/mb, files)
	if size > budget*mb {
		t.Errorf("the chat's generated files hold %.2f MB (%d page snapshots, %.2f MB), over its budget of %d MB",
			float64(size)/mb, n, float64(snaps)/mb, budget)
	}
	if n == 0 {
		t.Error("no page snapshot is left: the newest should stay")
	}
}

// Tool results saved over the cap (results/) stay within the budget.
func TestE2EResultsStayWithinTheBudget(t *testing.T) {
	big := strings.Repeat("many words of a big result\n", 200<<10/27) // 200 KB, under what a call may carry
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text(fmt.Sprintf("got %d bytes", len(res)))
		}
		return call("echo", fmt.Sprintf(`{"text":%q}`, big))
	}, daemonOptions{extra: []string{"CHAT_DISK_BUDGET_MB=1", "MCP_MAX_RESULT_TOKENS=5000"}})
	for i := range 8 {
		before := len(d.tg.Sent(alice))
		d.tg.Message(alice, alice, fmt.Sprintf("big %d", i))
		testkit.WaitFor(t, "the answer", 20*time.Second, func() bool { return lastWithPrefix(sentSince(d, alice, before), "got ") != "" })
	}
	n, size := filesLike(d.dataDir, alice, "*-echo.txt")
	t.Logf("after 8 results of 200 KB: %d saved results of %.2f MB", n, float64(size)/mb)
	if size > mb {
		t.Errorf("results/ holds %d files of %.2f MB, over the chat's budget of 1 MB", n, float64(size)/mb)
	}
	if n == 0 {
		t.Error("no saved result is left: the newest should stay")
	}
	// /usage tells the chat's disk.
	d.tg.Message(alice, alice, "/usage")
	d.waitText(alice, "Disk: ")
	usage := lastWithPrefix(d.texts(alice), "Model usage of this chat")
	want := fmt.Sprintf("Disk: %s of this chat's 1.0 MB for files the bot and its tools make", sizeText(size))
	if !strings.Contains(usage, want) || !strings.Contains(usage, fmt.Sprintf("• results/ (tool results too big for one step): %s in %d files", sizeText(size), n)) {
		t.Errorf("/usage says %q, want %q and results/'s line", usage, want)
	}
}

// sizeText is byteSize's way of writing n bytes (session.byteSize).
func sizeText(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

// Archived conversations (one per /new) stay within the budget; the newest
// is kept.
func TestE2EArchivedTranscriptsStayWithinTheBudget(t *testing.T) {
	big := strings.Repeat("a long message of the conversation\n", 80<<10/35) // 80 KB
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text(fmt.Sprintf("got %d bytes", len(res)))
		}
		return call("echo", fmt.Sprintf(`{"text":%q}`, big))
	}, daemonOptions{extra: []string{"CHAT_DISK_BUDGET_MB=1"}})
	for i := range 8 {
		before := len(d.tg.Sent(alice))
		d.tg.Message(alice, alice, fmt.Sprintf("talk %d", i))
		testkit.WaitFor(t, "the answer", 20*time.Second, func() bool { return lastWithPrefix(sentSince(d, alice, before), "got ") != "" })
		d.tg.Message(alice, alice, "/new")
		testkit.WaitFor(t, "/new", 20*time.Second, func() bool { return contains(sentSince(d, alice, before), "New conversation started.") })
	}
	archived, _ := filepath.Glob(filepath.Join(chatdir.New(d.dataDir).Private(chat.In(alice)), "transcript-*.jsonl"))
	var size int64
	for _, p := range archived {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	t.Logf("after 8 conversations of ~160 KB: %d archived transcripts of %.2f MB", len(archived), float64(size)/mb)
	if size > mb {
		t.Errorf("%d archived transcripts hold %.2f MB, over the chat's budget of 1 MB", len(archived), float64(size)/mb)
	}
	if len(archived) == 0 {
		t.Error("no archived transcript is left: the newest should stay")
	}
}
