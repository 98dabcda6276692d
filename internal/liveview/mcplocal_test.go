package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// localMCP is the pinned @playwright/mcp with a Chromium of its own,
// launched over a pipe as the shared and per-chat modes run it (no
// DevTools port), spoken to over stdio by concurrent callers.
type localMCP struct {
	in io.Writer

	mu      sync.Mutex // in, id, waiting
	id      int
	waiting map[int]chan json.RawMessage
	readWG  sync.WaitGroup
	read    atomic.Int64 // bytes the server wrote to the bot
}

func startLocalMCP(t *testing.T) *localMCP {
	t.Helper()
	bin := testkit.NPMBin(t, "playwright-mcp")
	cmd := exec.Command(bin, "--browser", "chromium", "--executable-path", testkit.Chromium(t), "--headless", "--no-sandbox",
		"--isolated", "--viewport-size", "1280x720", "--output-dir", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &localMCP{in: stdin, waiting: map[int]chan json.RawMessage{}}
	c.readWG.Add(1)
	go func() {
		defer c.readWG.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.read.Add(int64(len(sc.Bytes())) + 1)
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue
			}
			c.mu.Lock()
			ch := c.waiting[*m.ID]
			delete(c.waiting, *m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- append(json.RawMessage(nil), sc.Bytes()...)
			}
		}
	}()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait(); c.readWG.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.request(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "liveview-test", "version": "0"}}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	c.mu.Unlock()
	return c
}

func (c *localMCP) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan json.RawMessage, 1)
	c.mu.Lock()
	c.id++
	id := c.id
	c.waiting[id] = ch
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	_, err := c.in.Write(append(b, '\n'))
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case line := <-ch:
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Error != nil {
			return nil, errors.New("rpc error")
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tool calls a tool; an error result is an error (its text unread).
func (c *localMCP) tool(ctx context.Context, name string, args any) (string, error) {
	raw, err := c.request(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) == 0 {
		return "", errors.New("the tool failed")
	}
	return r.Content[0].Text, nil
}

// run is the chat session's RunCode.
func (c *localMCP) run(ctx context.Context, code string) (string, error) {
	return c.tool(ctx, LocateTool, map[string]string{"code": code})
}

func (c *localMCP) navigate(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.tool(ctx, "browser_navigate", map[string]string{"url": url}); err != nil {
		t.Fatalf("navigate: %v", err)
	}
}

// held is what the pump may leave behind in the browser server: the CDP
// sessions Playwright's client holds (a pump's, while it runs), the
// listeners of the tab's close and popup events, and those of the
// context's other pages (popups), each page's close + popup listeners.
type held struct {
	Sessions, Close, Popup int
	Others                 []int
}

func (c *localMCP) held(t *testing.T) held {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	answer, err := c.run(ctx, `async (page) => ({
  sessions: [...page._connection._objects.values()].filter((o) => o._type === 'CDPSession').length,
  close: page.listenerCount('close'), popup: page.listenerCount('popup'),
  others: page.context().pages().filter((p) => p !== page).map((p) => p.listenerCount('close') + p.listenerCount('popup')) })`)
	var h held
	if err == nil {
		err = result(answer, &h)
	}
	if err != nil {
		t.Fatalf("count the CDP sessions: %v", err)
	}
	return h
}

// closePopups closes the context's pages but the chat's tab.
func (c *localMCP) closePopups(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := c.run(ctx, `async (page) => { for (const p of page.context().pages()) if (p !== page) await p.close(); }`); err != nil {
		t.Fatalf("close the popups: %v", err)
	}
}

// localSite is a page with a toggle button (its background flips at each
// tap, at (100, 50)), a text field (#f, at (150, 150)) whose value is
// posted on Enter, a button that opens a popup (at (100, 250)), and an
// animated page (/anim: a counter every 16 ms). The popup (/popup?n=1)
// has a field (at (150, 50)) posted on Enter, a button that closes the
// window (at (100, 130)) and one that opens a popup of its own
// (/popup?n=2, at (100, 230)).
type localSite struct {
	*httptest.Server
	mu    sync.Mutex
	typed []string
}

func newLocalSite(t *testing.T) *localSite {
	s := &localSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/anim":
			w.Write([]byte(`<!doctype html><body style="margin:0"><h1 id="c">0</h1><div style="width:300px;height:300px;background:linear-gradient(90deg,#08f,#f80)"></div>
<script>let n=0;setInterval(()=>{document.getElementById('c').textContent=++n},16)</script>`))
		case "/popup":
			w.Write([]byte(`<!doctype html><body style="margin:0;background:#ffd"><p style="margin-top:300px">Sign in with a popup</p>
<input id="g" style="position:absolute;left:100px;top:40px;width:200px;height:20px" onkeydown="if(event.key=='Enter')fetch('/typed?v='+encodeURIComponent(this.value))">
<button style="position:absolute;left:0;top:100px;width:200px;height:60px" onclick="window.close()">close</button>
<button style="position:absolute;left:0;top:200px;width:200px;height:60px" onclick="window.open('/popup?n=2','second','popup')">another</button>`))
		case "/typed":
			s.mu.Lock()
			s.typed = append(s.typed, r.URL.Query().Get("v"))
			s.mu.Unlock()
		default:
			w.Write([]byte(`<!doctype html><body style="margin:0;background:#fff"><p style="margin-top:120px">Sign in to continue</p>
<button style="position:absolute;left:0;top:0;width:200px;height:100px" onclick="document.body.style.background=document.body.style.background=='red'?'blue':'red'">toggle</button>
<input id="f" style="position:absolute;left:100px;top:140px;width:200px;height:20px" onkeydown="if(event.key=='Enter')fetch('/typed?v='+encodeURIComponent(this.value))">
<button style="position:absolute;left:0;top:200px;width:200px;height:100px" onclick="window.open('/popup?n=1','login','popup')">sign in</button>`))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *localSite) waitTyped(t *testing.T, want string) {
	t.Helper()
	testkit.WaitFor(t, "the site to see the typed text", 15*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.typed) > 0 && s.typed[len(s.typed)-1] == want
	})
}

// localView begins a hand-off on the chat's tab of c, through an
// MCPTarget (screenshots only with noRelay), and opens it.
func localView(t *testing.T, r *rig, c *localMCP, noRelay bool) (*Live, string, *MCPTarget) {
	t.Helper()
	r.clock.Set(time.Now()) // the rates refill as time passes
	tab := NewMCPTarget(c.run)
	tab.noRelay = noRelay
	l := r.begin(t, Handoff{Chat: 1, User: 7, Connect: func(context.Context) (Target, error) { return tab, nil }}, nil)
	_, secret := r.open(t, l)
	return l, secret, tab
}

// TestMCPTargetPumpDrivesALocalBrowser: a browser launched over a pipe by
// the pinned @playwright/mcp, reached only through tool calls: the pump
// starts, a tap shows its change within a second, typed text and Enter
// reach the page (and no log line), frames follow the tab to another page
// and Back brings it back, they follow a popup the tab opens (and one the
// popup opens) and come back when it closes, and each hand-off's end lets
// its CDP session and its listeners go — none is left after five, the
// second with a popup opened and closed, the third ended with two open.
func TestMCPTargetPumpDrivesALocalBrowser(t *testing.T) {
	c := startLocalMCP(t)
	site := newLocalSite(t)
	c.navigate(t, site.URL)
	h0 := c.held(t)
	if h0.Sessions != 0 || h0.Popup != 0 || len(h0.Others) != 0 {
		t.Fatalf("before any hand-off: %+v", h0)
	}
	r := newRig(t)
	for i := range 5 {
		c.navigate(t, site.URL) // as the model leaves it: an empty field
		l, secret, tab := localView(t, r, c, false)
		first := r.do(t, "GET", PathPrefix+"s/frame?after=0", secret, "")
		if first.status != 200 || !strings.HasPrefix(first.body, "\xff\xd8") || tab.relayed() == nil {
			t.Fatalf("hand-off %d: first frame %d (%d bytes), pump %v", i, first.status, len(first.body), tab.relayed() != nil)
		}
		if got := first.header.Get("X-Page-Url"); got != urlHeader(site.URL+"/") {
			t.Fatalf("X-Page-Url %q", got)
		}
		if h := c.held(t); h.Sessions != 1 || h.Close != h0.Close+1 || h.Popup != 1 {
			t.Fatalf("hand-off %d: %+v while it runs, want the pump's 1 session and 1 more listener of each (%+v before)", i, h, h0)
		}
		start := time.Now()
		tapAt(t, r, secret, first, 100, 50)
		waitFrame(t, r, secret, first, func(a answer) bool { return a.body != first.body })
		if d := time.Since(start); d > time.Second {
			t.Errorf("hand-off %d: tap → changed frame took %v", i, d)
		}
		typeInto(t, r, secret, first, 150, 150, "hunter2 🔑 "+string(rune('a'+i)))
		site.waitTyped(t, "hunter2 🔑 "+string(rune('a'+i)))
		switch i {
		case 0: // the frames follow the tab to another page, and Back brings it back
			if _, err := c.run(context.Background(), `async (page) => { await page.goto(`+js(site.URL+"/anim")+`); }`); err != nil {
				t.Fatal(err)
			}
			waitFrame(t, r, secret, first, func(a answer) bool { return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/anim") })
			if a := r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"back"}`); a.status != http.StatusNoContent {
				t.Fatalf("back: %d", a.status)
			}
			waitFrame(t, r, secret, first, func(a answer) bool { return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/") })
		case 1, 2:
			followPopups(t, r, c, site, secret, first, i == 2)
		}
		endView(t, r, l, secret)
		h := c.held(t)
		for _, n := range h.Others { // a popup left open: @playwright/mcp's own listeners only
			if n != h0.Close {
				t.Errorf("after hand-off %d: a popup has %d listeners, want @playwright/mcp's %d", i, n, h0.Close)
			}
		}
		if h.Sessions != 0 || h.Close != h0.Close || h.Popup != 0 || len(h.Others) != map[bool]int{true: 2}[i == 2] {
			t.Fatalf("after hand-off %d: %+v (%+v before)", i, h, h0)
		}
		c.closePopups(t)
	}
	if logs := r.log.String(); strings.Contains(logs, "hunter2") {
		t.Fatalf("the typed text is in the log:\n%s", logs)
	}
}

// followPopups opens the site's popup through the view, types into it and
// closes it (the frames come back to the tab); with leaveOpen it opens it
// and the popup's own popup (closes that one: the popup again; opens it
// again), and leaves both open.
func followPopups(t *testing.T, r *rig, c *localMCP, site *localSite, secret string, from answer, leaveOpen bool) {
	t.Helper()
	onPopup := func(n string) func(answer) bool {
		return func(a answer) bool { return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/popup?n="+n) }
	}
	tapAt(t, r, secret, from, 100, 250)
	p := waitFrame(t, r, secret, from, onPopup("1"))
	if h := c.held(t); h.Sessions != 1 || len(h.Others) != 1 {
		t.Fatalf("with the popup shown: %+v, want the pump's 1 session and the popup", h)
	}
	if leaveOpen { // the popup's popup: shown, closed (the popup again), opened again and left open
		tapAt(t, r, secret, p, 100, 230)
		q := waitFrame(t, r, secret, p, onPopup("2"))
		tapAt(t, r, secret, q, 100, 130)
		p = waitFrame(t, r, secret, q, onPopup("1"))
		tapAt(t, r, secret, p, 100, 230)
		waitFrame(t, r, secret, p, onPopup("2"))
		return
	}
	typeInto(t, r, secret, p, 150, 50, "popup hunter2")
	site.waitTyped(t, "popup hunter2")
	tapAt(t, r, secret, p, 100, 130)
	waitFrame(t, r, secret, p, func(a answer) bool { return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/") })
	if h := c.held(t); h.Sessions != 1 || len(h.Others) != 0 {
		t.Fatalf("back from the popup: %+v, want the pump's 1 session and no popup", h)
	}
}

// tapAt taps the view at CSS pixel (x, y) of frame f's page.
func tapAt(t *testing.T, r *rig, secret string, f answer, x, y float64) {
	t.Helper()
	in := `{"kind":"tap","x":` + jsonFloat(x/float64(atoiHeader(t, f, "X-Frame-Width"))) + `,"y":` + jsonFloat(y/float64(atoiHeader(t, f, "X-Frame-Height"))) + `}`
	if a := r.do(t, "POST", PathPrefix+"s/input", secret, in); a.status != http.StatusNoContent {
		t.Fatalf("tap at (%v, %v): %d %s\n%s", x, y, a.status, a.body, r.log.String())
	}
}

// typeInto taps the field at (x, y) of frame f's page, types text and
// presses Enter.
func typeInto(t *testing.T, r *rig, secret string, f answer, x, y float64, text string) {
	t.Helper()
	tapAt(t, r, secret, f, x, y)
	for _, in := range []string{`{"kind":"text","text":"` + text + `"}`, `{"kind":"key","key":"Enter"}`} {
		if a := r.do(t, "POST", PathPrefix+"s/input", secret, in); a.status != http.StatusNoContent {
			t.Fatalf("input %d %s\n%s", a.status, a.body, r.log.String())
		}
	}
}

// TestMeasureMCPTarget measures the live view of a browser that runs here
// (MCPTarget over the pinned @playwright/mcp, launched over a pipe), the
// screenshot loop ("before") and the pump ("after") side by side, on one
// server: tap → changed frame (20 taps), bytes a second on a still page,
// frames and bytes a second on an animated one. Run with
// VOLCANIC_LIVEVIEW_MEASURE=1 (and VOLCANIC_TEST_CHROMIUM,
// VOLCANIC_TEST_NPM_BIN).
func TestMeasureMCPTarget(t *testing.T) {
	if testing.Short() || !measuring() {
		t.Skip("set VOLCANIC_LIVEVIEW_MEASURE=1 to measure")
	}
	c := startLocalMCP(t)
	site := newLocalSite(t)
	r := newRig(t)
	const window = 5 * time.Second
	for _, mode := range []struct {
		name    string
		noRelay bool
	}{{"screenshots (before)", true}, {"pump (after)", false}} {
		c.navigate(t, site.URL)
		start := time.Now()
		l, secret, _ := localView(t, r, c, mode.noRelay)
		first := waitFrame(t, r, secret, answer{header: http.Header{"X-Frame-Seq": {"0"}}}, func(answer) bool { return true })
		firstIn := time.Since(start)
		w, h := atoiHeader(t, first, "X-Frame-Width"), atoiHeader(t, first, "X-Frame-Height")
		lat, missed, last := tapLatencies(t, r, secret, first, w, h, 20)
		seq := last.header.Get("X-Frame-Seq")
		for pollWithin(t, r, secret, &seq, time.Second) { // the last tap's frames
		}
		serverBefore := c.read.Load()
		idleFrames, idleBytes := streamFor(t, r, secret, seq, window)
		serverIdle := c.read.Load() - serverBefore
		endView(t, r, l, secret)

		c.navigate(t, site.URL+"/anim")
		l, secret, _ = localView(t, r, c, mode.noRelay)
		waitFrame(t, r, secret, answer{header: http.Header{"X-Frame-Seq": {"0"}}}, func(answer) bool { return true })
		animFrames, animBytes := streamFor(t, r, secret, "0", window)
		endView(t, r, l, secret)

		n := len(lat)
		t.Logf("%s: first frame %v; tap → changed frame over %d taps (%dx%d CSS px): median %v, p90 %v, max %v, %d missed; "+
			"still page: %d frames, %.0f B/s to the viewer, %.0f B/s from the browser server over stdio; animated page: %.1f frames/s, %s/s (%d B a frame)",
			mode.name, firstIn.Round(time.Millisecond), n+missed, w, h, lat[n/2].Round(time.Millisecond), lat[n*9/10].Round(time.Millisecond),
			lat[n-1].Round(time.Millisecond), missed, idleFrames, float64(idleBytes)/window.Seconds(), float64(serverIdle)/window.Seconds(),
			float64(animFrames)/window.Seconds(), kib(int(float64(animBytes)/window.Seconds())), animBytes/max(1, animFrames))
	}
}

func measuring() bool { return os.Getenv("VOLCANIC_LIVEVIEW_MEASURE") != "" }

// tapLatencies taps the page's toggle n times and gives how long each took
// from the input's POST to a changed frame (sorted), how many showed none
// within 3 s, and the last frame.
func tapLatencies(t *testing.T, r *rig, secret string, first answer, w, h, n int) ([]time.Duration, int, answer) {
	t.Helper()
	var lat []time.Duration
	last, missed := first, 0
	for range n {
		start := time.Now()
		r.clock.Set(start)
		r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"tap","x":`+jsonFloat(100/float64(w))+`,"y":`+jsonFloat(50/float64(h))+`}`)
		seq := last.header.Get("X-Frame-Seq")
		changed := false
		for time.Since(start) < 3*time.Second && !changed {
			prevSeq := seq
			if pollWithin(t, r, secret, &seq, 3*time.Second-time.Since(start)) && seq != prevSeq {
				a := r.do(t, "GET", PathPrefix+"s/frame?after="+prevSeq, secret, "")
				changed, last = a.body != last.body, a
			}
		}
		if !changed {
			missed++
			continue
		}
		lat = append(lat, time.Since(start))
	}
	if len(lat) == 0 {
		t.Fatal("no tap showed a changed frame")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat, missed, last
}

// streamFor takes frames after seq as fast as they come for d, and counts
// them and their bytes.
func streamFor(t *testing.T, r *rig, secret, seq string, d time.Duration) (frames, bytes int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for ctx.Err() == nil {
		r.clock.Set(time.Now())
		req, _ := http.NewRequestWithContext(ctx, "GET", r.http.URL+PathPrefix+"s/frame?after="+seq, nil)
		req.Header.Set(sessionHeader, secret)
		resp, err := r.http.Client().Do(req)
		if err != nil {
			break
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
			t.Fatalf("a frame: %d", resp.StatusCode)
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		frames++
		bytes += len(b)
		seq = resp.Header.Get("X-Frame-Seq")
	}
	return frames, bytes
}

// endView presses the view's Done and waits for the hand-off's end.
func endView(t *testing.T, r *rig, l *Live, secret string) {
	t.Helper()
	r.clock.Set(time.Now())
	if a := r.do(t, "POST", PathPrefix+"s/done", secret, ""); a.status != http.StatusNoContent {
		t.Fatalf("done: %d %s", a.status, a.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o := l.Wait(ctx); o != OutcomeDone {
		t.Fatalf("the hand-off ended %v", o)
	}
}
