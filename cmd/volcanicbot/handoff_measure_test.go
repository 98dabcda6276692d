package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// TestBrowserHandoffMeasure gives the numbers of docs/performance.md's live
// view through the binary with the shared browser (the tab reached through
// the chat's MCP session): tap → changed frame, bytes a frame, and the
// memory while two hand-offs run. VOLCANIC_HANDOFF_MEASURE=1 runs it.
func TestBrowserHandoffMeasure(t *testing.T) {
	if os.Getenv("VOLCANIC_HANDOFF_MEASURE") == "" {
		t.Skip("set VOLCANIC_HANDOFF_MEASURE=1 to measure")
	}
	env := browserEnv(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><body style="margin:0;background:#fff"><p>Sign in to continue</p>
<button style="position:absolute;left:0;top:0;width:200px;height:100px" onclick="document.body.style.background=document.body.style.background=='red'?'blue':'red'">toggle</button>`))
	}))
	defer site.Close()
	addr := freeAddr(t)
	d := startDaemon(t, handOff, daemonOptions{extra: append(env, "HTTP_ADDR="+addr, "PUBLIC_URL=http://"+addr)})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	secrets := make([]string, 0, 2)
	for _, user := range []int64{alice, bob} {
		d.tg.Message(user, user, "handoff "+site.URL)
		secrets = append(secrets, openView(t, d, user, addr))
	}
	for i, s := range secrets {
		lat, bytes, frames := measureTapsHTTP(t, addr, s, 10)
		slices.Sort(lat)
		t.Logf("view %d: tap → changed frame over %d taps: median %v, p90 %v, max %v; %d frames, %d bytes a frame",
			i+1, len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1], frames, bytes/max(frames, 1))
	}
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	t.Logf("bot's Go heap with two hand-offs: %d KiB in use (before: %d KiB), %d goroutines; browser server and Chromium: %d MiB RSS",
		during.HeapInuse>>10, before.HeapInuse>>10, runtime.NumGoroutine(), childRSS(d)>>20)
}

var sessionMeta = regexp.MustCompile(`<meta name="lv-session" content="([^"]+)">`)

// openView opens the link of user's hand-off as the page does (its
// Telegram data posted) and gives the page's session secret.
func openView(t *testing.T, d *daemon, user int64, addr string) string {
	t.Helper()
	var link string
	testkit.WaitFor(t, "the hand-off's link", 60*time.Second, func() bool {
		for _, m := range d.tg.Sent(user) {
			for _, row := range m.Keyboard {
				for _, b := range row {
					if b.URL != "" {
						link = b.URL
						return true
					}
				}
			}
		}
		return false
	})
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := sessionMeta.FindSubmatch(body)
	if m == nil {
		t.Fatalf("the page %s has no session", link)
	}
	init := strings.TrimPrefix(liveviewtest.MiniAppFragment(d.tg.Token(), user, time.Now()), "#")
	data := init[len("tgWebAppData="):strings.Index(init, "&tgWebAppThemeParams")]
	if code := post(t, "http://"+addr+"/live/s/auth", string(m[1]), mustUnescape(t, data)); code != http.StatusNoContent {
		t.Fatalf("auth: %d", code)
	}
	return string(m[1])
}

// measureTapsHTTP taps the toggle n times and times each tap's changed
// frame (the view sends only changed ones).
func measureTapsHTTP(t *testing.T, addr, secret string, n int) (lat []time.Duration, bytes, frames int) {
	t.Helper()
	seq, _ := frame(t, addr, secret, "0", 60*time.Second)
	for range n {
		start := time.Now()
		if code := post(t, "http://"+addr+"/live/s/input", secret, `{"kind":"tap","x":0.05,"y":0.05}`); code != http.StatusNoContent {
			t.Fatalf("tap: %d", code)
		}
		next, size := frame(t, addr, secret, seq, 30*time.Second)
		lat = append(lat, time.Since(start))
		seq, bytes, frames = next, bytes+size, frames+1
	}
	return lat, bytes, frames
}

// frame long-polls the first frame after seq.
func frame(t *testing.T, addr, secret, after string, within time.Duration) (string, int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/live/s/frame?after="+after, nil)
		req.Header.Set("X-Live-Session", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return resp.Header.Get("X-Frame-Seq"), len(b)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("frame: %d %s", resp.StatusCode, b)
		}
	}
	t.Fatalf("no frame after %s within %v", after, within)
	return "", 0
}

func post(t *testing.T, url, secret, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-Live-Session", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func mustUnescape(t *testing.T, s string) string {
	t.Helper()
	u, err := url.QueryUnescape(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// childRSS is the resident memory of the daemon's marked processes (the
// browser server and Chromium's processes).
func childRSS(d *daemon) int64 {
	var sum int64
	for _, pid := range markedPIDs(ownerMark(d.dataDir)) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			sum += pages * int64(os.Getpagesize())
		}
	}
	return sum
}
