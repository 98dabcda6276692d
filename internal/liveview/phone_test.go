package liveview

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// phone is a tab of a second browser context set to a phone's viewport,
// that opens the live view's page as Telegram's client would.
type phone struct {
	t       *testing.T
	conn    *cdpConn
	session string
}

func newPhone(t *testing.T, conn *cdpConn, link string) *phone {
	t.Helper()
	target, _ := newChatTab(t, conn, "about:blank")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := conn.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &a); err != nil {
		t.Fatal(err)
	}
	p := &phone{t: t, conn: conn, session: a.SessionID}
	p.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": true}, nil)
	p.call("Page.navigate", map[string]string{"url": link}, nil)
	return p
}

func (p *phone) call(method string, params, result any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := p.conn.call(ctx, p.session, method, params, result); err != nil {
		p.t.Fatal(err)
	}
}

// eval is the value of a JavaScript expression in the phone's page.
func (p *phone) eval(expr string, into any) {
	p.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	p.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if err := json.Unmarshal(r.Result.Value, into); err != nil {
		p.t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
	}
}

// tap touches the phone's screen at (x, y) CSS pixels.
func (p *phone) tap(x, y float64) {
	p.t.Helper()
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		p.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}, nil)
	}
}

type rect struct{ X, Y, W, H float64 }

func (p *phone) rect(id string) rect {
	p.t.Helper()
	var r rect
	p.eval(`(() => { const b = document.getElementById("`+id+`").getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; })()`, &r)
	return r
}

// TestAPhoneDrivesTheTabThroughThePage: the page itself, in a phone-sized
// viewer opened with Telegram's launch fragment, shows the chat's tab and
// its host, and its taps, typing, Enter and Done reach the tab.
func TestAPhoneDrivesTheTabThroughThePage(t *testing.T) {
	ws := startChromium(t)
	site := newPageSite(t)
	conn, err := dialCDP(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tab, bctx := newChatTab(t, conn, site.URL)
	site.waitHit(t, "/")
	r := newRig(t)
	r.clock.Set(time.Now())
	l := r.begin(t, Handoff{Chat: 42, User: 7, MiniApp: true, Connect: func(ctx context.Context) (Target, error) {
		return AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: tab, ContextID: bctx})
	}}, nil)
	launch := url.Values{"tgWebAppData": {signInitData(testBotToken, initFields(7, time.Now()))},
		"tgWebAppThemeParams": {`{"bg_color":"#17212b","text_color":"#f5f5f5","button_color":"#5288c1"}`}, "tgWebAppVersion": {"8.0"}}
	p := newPhone(t, conn, r.http.URL+l.URL()+"#"+launch.Encode())

	var host string
	testkit.WaitFor(t, "the page showing a frame", 15*time.Second, func() bool {
		var w float64
		p.eval(`(document.getElementById("screen") || {}).naturalWidth || 0`, &w)
		p.eval(`(document.getElementById("host") || {}).textContent || ""`, &host)
		return w > 0
	})
	if u, _ := url.Parse(site.URL); host != u.Host {
		t.Fatalf("the page shows host %q, want %q", host, u.Host)
	}
	var bg, hash string
	p.eval(`getComputedStyle(document.body).backgroundColor`, &bg)
	p.eval(`location.hash`, &hash)
	if bg != "rgb(23, 33, 43)" || hash != "" {
		t.Fatalf("theme background %q (want Telegram's rgb(23, 33, 43)); fragment left in the URL: %q", bg, hash)
	}
	screen := p.rect("screen")
	var tabWidth float64 // the chat's tab in CSS pixels, as the frames say
	p.eval(`Number(document.getElementById("screen").dataset.w)`, &tabWidth)
	if tabWidth <= 0 {
		t.Fatal("the page has no frame width")
	}
	scale := screen.W / tabWidth // the site's button is its top-left 200×100 CSS px
	p.tap(screen.X+100*scale, screen.Y+50*scale)
	site.waitHit(t, "/tap")

	p.tap(screen.X+150*scale, screen.Y+220*scale) // the site's field
	text := p.rect("text")
	p.tap(text.X+text.W/2, text.Y+text.H/2) // the page's own box
	const typed = "2fa 918273"
	p.call("Input.insertText", map[string]string{"text": typed}, nil)
	p.call("Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}, nil)
	p.call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}, nil)
	if v := site.waitHit(t, "/typed"); v != typed {
		t.Fatalf("the site saw %q, want %q", v, typed)
	}
	if shot := os.Getenv("VOLCANIC_LIVEVIEW_SCREENSHOT"); shot != "" {
		var s struct {
			Data string `json:"data"`
		}
		p.call("Page.captureScreenshot", map[string]string{"format": "png"}, &s)
		b, _ := base64.StdEncoding.DecodeString(s.Data)
		os.WriteFile(shot, b, 0o600)
	}
	done := p.rect("done")
	p.tap(done.X+done.W/2, done.Y+done.H/2)
	if o := l.Wait(context.Background()); o != OutcomeDone {
		t.Fatalf("Wait = %v", o)
	}
	if strings.Contains(r.log.String(), "918273") {
		t.Fatal("the typed code is in the log")
	}
}
