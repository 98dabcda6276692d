package liveview

import (
	"context"
	"encoding/base64"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/cdp"
	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// TestAPhoneDrivesTheTabThroughThePage: the page itself, in a phone-sized
// viewer opened with Telegram's launch fragment, shows the chat's tab and
// its host, and its taps, typing, Enter and Done reach the tab.
func TestAPhoneDrivesTheTabThroughThePage(t *testing.T) {
	ws := liveviewtest.StartChromium(t)
	site := liveviewtest.NewSite(t)
	conn, err := cdp.Dial(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tab, bctx := liveviewtest.NewChatTab(t, conn, site.URL)
	site.WaitHit(t, "/")
	r := newRig(t)
	r.clock.Set(time.Now())
	l := r.begin(t, Handoff{Chat: 42, User: 7, MiniApp: true, Connect: func(ctx context.Context) (Target, error) {
		return AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: tab, ContextID: bctx})
	}}, nil)
	launch := url.Values{"tgWebAppData": {liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(7, time.Now()))},
		"tgWebAppThemeParams": {`{"bg_color":"#17212b","text_color":"#f5f5f5","button_color":"#5288c1"}`}, "tgWebAppVersion": {"8.0"}}
	p := liveviewtest.NewPhone(t, conn, r.http.URL+l.URL()+"#"+launch.Encode())

	var host string
	testkit.WaitFor(t, "the page showing a frame", 15*time.Second, func() bool {
		var w float64
		p.Eval(`(document.getElementById("screen") || {}).naturalWidth || 0`, &w)
		p.Eval(`(document.getElementById("host") || {}).textContent || ""`, &host)
		return w > 0
	})
	if u, _ := url.Parse(site.URL); host != u.Host {
		t.Fatalf("the page shows host %q, want %q", host, u.Host)
	}
	var bg, hash string
	p.Eval(`getComputedStyle(document.body).backgroundColor`, &bg)
	p.Eval(`location.hash`, &hash)
	if bg != "rgb(23, 33, 43)" || hash != "" {
		t.Fatalf("theme background %q (want Telegram's rgb(23, 33, 43)); fragment left in the URL: %q", bg, hash)
	}
	screen := p.Rect("screen")
	var tabWidth float64 // the chat's tab in CSS pixels, as the frames say
	p.Eval(`Number(document.getElementById("screen").dataset.w)`, &tabWidth)
	if tabWidth <= 0 {
		t.Fatal("the page has no frame width")
	}
	scale := screen.W / tabWidth // the site's button is its top-left 200×100 CSS px
	p.Tap(screen.X+100*scale, screen.Y+50*scale)
	site.WaitHit(t, "/tap")

	p.Tap(screen.X+150*scale, screen.Y+220*scale) // the site's field
	text := p.Rect("text")
	p.Tap(text.X+text.W/2, text.Y+text.H/2) // the page's own box
	const typed = "2fa 918273"
	p.Call("Input.insertText", map[string]string{"text": typed}, nil)
	p.Call("Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}, nil)
	p.Call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}, nil)
	if v := site.WaitHit(t, "/typed"); v != typed {
		t.Fatalf("the site saw %q, want %q", v, typed)
	}
	if shot := os.Getenv("VOLCANIC_LIVEVIEW_SCREENSHOT"); shot != "" {
		var s struct {
			Data string `json:"data"`
		}
		p.Call("Page.captureScreenshot", map[string]string{"format": "png"}, &s)
		b, _ := base64.StdEncoding.DecodeString(s.Data)
		os.WriteFile(shot, b, 0o600)
	}
	done := p.Rect("done")
	p.Tap(done.X+done.W/2, done.Y+done.H/2)
	if o := l.Wait(context.Background()); o != OutcomeDone {
		t.Fatalf("Wait = %v", o)
	}
	if strings.Contains(r.log.String(), "918273") {
		t.Fatal("the typed code is in the log")
	}
}
