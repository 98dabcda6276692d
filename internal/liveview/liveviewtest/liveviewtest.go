// Package liveviewtest is what the live view's tests share, in
// internal/liveview and through the real binary (cmd/volcanicbot): a
// headless Chromium with a loopback DevTools port, a local site with a
// button and a field, a phone-sized viewer that opens a live view's link as
// Telegram's client would, and initData signed as Telegram signs it. For
// tests only.
package liveviewtest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/cdp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// StartChromium runs a headless Chromium with its DevTools on a loopback
// port of its choosing (a test's browser, never the bot's), and gives its
// browser websocket. Skipped unless VOLCANIC_TEST_CHROMIUM names the
// browser (CI sets it).
func StartChromium(t testing.TB) string {
	t.Helper()
	if os.Getenv("VOLCANIC_TEST_CHROMIUM") == "" {
		t.Skip("VOLCANIC_TEST_CHROMIUM is unset: no real browser")
	}
	bin := testkit.Chromium(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+dir,
		"--window-size=400,700", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	var lines []string
	testkit.WaitFor(t, "DevToolsActivePort", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		lines = strings.Fields(string(b))
		return err == nil && len(lines) == 2
	})
	return "ws://127.0.0.1:" + lines[0] + lines[1]
}

// Dial connects to a browser websocket, closed when the test ends.
func Dial(t testing.TB, ws string) *cdp.Conn {
	t.Helper()
	conn, err := cdp.Dial(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Site is the local site a chat's tab shows: a button at the top left
// (200×100 CSS pixels) that reports a tap (/tap) and turns the page red,
// and a field at y 200..240 whose Enter reports what was typed
// (/typed?v=…).
type Site struct {
	*httptest.Server
	hits chan string
}

// NewSite starts a Site, closed when the test ends.
func NewSite(t testing.TB) *Site {
	s := &Site{hits: make(chan string, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<!doctype html><html><head><title>Tap site</title></head><body style="margin:0;background:#fff">
<button id="b" style="position:absolute;left:0;top:0;width:200px;height:100px"
 onclick="fetch('/tap');document.body.style.background='red';this.textContent='tapped'">tap me</button>
<form style="position:absolute;left:0;top:200px;margin:0" onsubmit="event.preventDefault();fetch('/typed?v='+encodeURIComponent(document.getElementById('f').value))">
<input id="f" aria-label="code" style="width:300px;height:40px;font-size:20px"></form>
<a href="/second" style="position:absolute;left:0;top:300px;display:block;width:200px;height:50px">next</a>
</body></html>`))
		case "/second":
			w.Write([]byte(`<!doctype html><p>second page</p>`))
		}
		select {
		case s.hits <- r.URL.Path + "?" + r.URL.Query().Get("v"):
		default:
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// WaitHit waits for the site to see a request for path, and gives its v.
func (s *Site) WaitHit(t testing.TB, path string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case h := <-s.hits:
			if p, v, _ := strings.Cut(h, "?"); p == path {
				return v
			}
		case <-timeout:
			t.Fatalf("the site never saw %s", path)
		}
	}
}

// NewChatTab opens url in a browser context of its own (a chat's, as the
// shared browser gives each chat) and gives the target and context ids.
func NewChatTab(t testing.TB, conn *cdp.Conn, url string) (target, browserContext string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var c struct {
		ID string `json:"browserContextId"`
	}
	if err := conn.Call(ctx, "", "Target.createBrowserContext", struct{}{}, &c); err != nil {
		t.Fatal(err)
	}
	var tg struct {
		ID string `json:"targetId"`
	}
	if err := conn.Call(ctx, "", "Target.createTarget", map[string]any{"url": url, "browserContextId": c.ID}, &tg); err != nil {
		t.Fatal(err)
	}
	return tg.ID, c.ID
}

// SignInitData is initData as a Telegram client sends it: fields plus the
// hash Telegram computes over them with the bot's token.
func SignInitData(token string, fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	check := ""
	for i, k := range keys {
		if i > 0 {
			check += "\n"
		}
		check += k + "=" + fields[k]
	}
	key := hmac.New(sha256.New, []byte("WebAppData"))
	key.Write([]byte(token))
	mac := hmac.New(sha256.New, key.Sum(nil))
	mac.Write([]byte(check))
	q := url.Values{}
	for k, v := range fields {
		q.Set(k, v)
	}
	q.Set("hash", hex.EncodeToString(mac.Sum(nil)))
	return q.Encode()
}

// InitFields are a Mini App launch's fields for user, signed at auth.
func InitFields(user int64, auth time.Time) map[string]string {
	return map[string]string{
		"query_id":      "AAHdF6IQAAAAAN0XohDhrOrc",
		"user":          `{"id":` + strconv.FormatInt(user, 10) + `,"first_name":"Ann","language_code":"en"}`,
		"auth_date":     strconv.FormatInt(auth.Unix(), 10),
		"chat_instance": "-1234567890",
		"signature":     "c2lnbmF0dXJl",
	}
}

// MiniAppFragment is the fragment Telegram's clients open a Mini App's URL
// with: initData signed for user with token, a dark theme.
func MiniAppFragment(token string, user int64, auth time.Time) string {
	launch := url.Values{"tgWebAppData": {SignInitData(token, InitFields(user, auth))},
		"tgWebAppThemeParams": {`{"bg_color":"#17212b","text_color":"#f5f5f5","button_color":"#5288c1"}`}, "tgWebAppVersion": {"8.0"}}
	return "#" + launch.Encode()
}

// Phone is a tab of a second browser context set to a phone's viewport,
// that opens a live view's page as Telegram's client would.
type Phone struct {
	t       testing.TB
	conn    *cdp.Conn
	session string
}

// NewPhone opens link in a 390×844 mobile viewport of a fresh context.
func NewPhone(t testing.TB, conn *cdp.Conn, link string) *Phone {
	t.Helper()
	target, _ := NewChatTab(t, conn, "about:blank")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := conn.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &a); err != nil {
		t.Fatal(err)
	}
	p := &Phone{t: t, conn: conn, session: a.SessionID}
	p.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": true}, nil)
	p.Call("Page.navigate", map[string]string{"url": link}, nil)
	return p
}

// Call sends one CDP method to the phone's tab.
func (p *Phone) Call(method string, params, result any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := p.conn.Call(ctx, p.session, method, params, result); err != nil {
		p.t.Fatal(err)
	}
}

// Eval is the value of a JavaScript expression in the phone's page.
func (p *Phone) Eval(expr string, into any) {
	p.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	p.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if err := json.Unmarshal(r.Result.Value, into); err != nil {
		p.t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
	}
}

// Tap touches the phone's screen at (x, y) CSS pixels.
func (p *Phone) Tap(x, y float64) {
	p.t.Helper()
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		p.Call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

// Rect is an element's box in the phone's CSS pixels.
type Rect struct{ X, Y, W, H float64 }

// Rect is the box of the page's element id.
func (p *Phone) Rect(id string) Rect {
	p.t.Helper()
	var r Rect
	p.Eval(`(() => { const b = document.getElementById("`+id+`").getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; })()`, &r)
	return r
}

// TapCenter taps the middle of the page's element id.
func (p *Phone) TapCenter(id string) {
	p.t.Helper()
	r := p.Rect(id)
	p.Tap(r.X+r.W/2, r.Y+r.H/2)
}

// Type types text into the focused element and presses Enter.
func (p *Phone) Type(text string, enter bool) {
	p.t.Helper()
	p.Call("Input.insertText", map[string]string{"text": text}, nil)
	if enter {
		p.Call("Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}, nil)
		p.Call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}, nil)
	}
}

// WaitFrame waits for the page to show a frame of the tab (whose width in
// the tab's CSS pixels it gives), and gives the host it shows.
func (p *Phone) WaitFrame(timeout time.Duration) (tabWidth float64, host string) {
	p.t.Helper()
	testkit.WaitFor(p.t, "the page showing a frame", timeout, func() bool {
		var w float64
		p.Eval(`(document.getElementById("screen") || {}).naturalWidth || 0`, &w)
		p.Eval(`(document.getElementById("host") || {}).textContent || ""`, &host)
		return w > 0
	})
	p.Eval(`Number(document.getElementById("screen").dataset.w)`, &tabWidth)
	if tabWidth <= 0 {
		p.t.Fatal("the page has no frame width")
	}
	return tabWidth, host
}
