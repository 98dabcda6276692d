package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A group's hand-off through the real binary, the real @playwright/mcp and
// Chromium (the shared browser): alice, who never started a private chat
// with the bot, asks in a group; the group is told to start one and press
// New link; she does, and the link comes to her private chat as a Mini App.
// Bob, another member who got hold of the link, opens it with his own
// Telegram data and gets nothing. Alice's New link (in her private chat)
// replaces it. Eve, an admin, presses New link in the group: the link goes
// to her private chat and her Telegram data opens it. Alice presses New
// link in the group: a new private message; her phone opens it, taps and
// types through the view; she presses Done in the group, and every message
// closes. No call to the group ever carried the link or a Mini App button.
// Polling with PUBLIC_URL, and by webhook without it (the live view on the
// webhook's origin).
func TestBrowserHandoffGroup(t *testing.T) {
	for _, webhook := range []bool{false, true} {
		t.Run(map[bool]string{false: "polling", true: "webhook"}[webhook], func(t *testing.T) {
			o := daemonOptions{webhook: webhook, webhookAddr: freeAddr(t),
				extra: append(browserEnv(t), "HANDOFF_TIMEOUT_SECONDS=120", fmt.Sprintf("TELEGRAM_ADMINS=%d", eve))}
			if !webhook {
				o.extra = append(o.extra, "HTTP_ADDR="+o.webhookAddr, "PUBLIC_URL=http://"+o.webhookAddr)
			}
			tg := groupHandoffRun(t, o)
			if got := tg.WebhookURL(); webhook != (got != "") {
				t.Errorf("the webhook set: %q", got)
			}
		})
	}
}

// groupHandoffRun is TestBrowserHandoffGroup in one mode.
func groupHandoffRun(t *testing.T, o daemonOptions) *telegramtest.Fake {
	site := liveviewtest.NewSite(t)
	phoneWS := liveviewtest.StartChromium(t)
	tg := newTelegram(t)
	tg.NotStarted(alice)
	o.tg = tg
	addr := o.webhookAddr // HTTP_ADDR in either mode
	d := startDaemon(t, handOff, o)

	d.tg.Message(groupChat, alice, "@"+d.tg.Me().Username+" handoff "+site.URL)
	site.WaitHit(t, "/")
	g := waitGroupHandoff(t, d, "they have not started one with me, or blocked me.")
	if want := "https://t.me/" + d.tg.Me().Username; !strings.Contains(g.Text, want) {
		t.Errorf("the group's message %q does not link %s", g.Text, want)
	}
	d.tg.Message(alice, alice, "/start")
	d.waitText(alice, "Commands:")
	if a := d.press(groupChat, bob, g, "🔄 New link"); !a.ShowAlert {
		t.Errorf("bob's New link answered %+v, want an alert", a)
	}
	d.press(groupChat, alice, g, "🔄 New link")
	waitGroupHandoff(t, d, "I sent the link to the live view to ")
	msg, link := waitHandoffMessage(t, d)
	if !link.WebApp || !strings.HasPrefix(link.URL, "http://"+addr+"/live/t/") {
		t.Fatalf("the private chat's button %+v, want a Mini App at http://%s/live/t/…", link, addr)
	}
	if !strings.Contains(msg.Text, "for the group <b>Group -4242</b>") {
		t.Errorf("the private message %q does not name the group", msg.Text)
	}

	fresh := othersAndAdmin(t, d, addr, g, msg, link)

	p := liveviewtest.NewPhone(t, liveviewtest.Dial(t, phoneWS), fresh.URL+liveviewtest.MiniAppFragment(d.tg.Token(), alice, time.Now()))
	tabWidth, _ := p.WaitFrame(60 * time.Second)
	screen := p.Rect("screen")
	scale := screen.W / tabWidth
	p.Tap(screen.X+150*scale, screen.Y+220*scale) // the site's field
	p.TapCenter("text")
	p.Type(handoffTyped, true)
	if got := site.WaitHit(t, "/typed"); got != handoffTyped {
		t.Fatalf("the site got %q, want %q", got, handoffTyped)
	}
	d.press(groupChat, alice, g, "✅ Done")
	groupHandoffDone(t, d)
	d.stop()
	groupGotNoLink(t, d.tg)
	typedNowhere(t, d)
	return tg
}

// othersAndAdmin: bob opens alice's link with his own Telegram data and
// gets nothing; alice's New link in her private chat replaces it; eve, an
// admin, takes over with New link in the group and opens it with hers;
// alice takes it back with New link in the group. It gives alice's link.
func othersAndAdmin(t *testing.T, d *daemon, addr string, g, msg telegramtest.Message, link telegramtest.Button) telegramtest.Button {
	t.Helper()
	if auth, frame := openAs(t, d, addr, link.URL, bob); auth != http.StatusNotFound || frame != http.StatusNotFound {
		t.Fatalf("bob's initData: auth %d, frame %d; want 404 and 404", auth, frame)
	}
	d.press(alice, alice, msg, "🔄 New link")
	testkit.WaitFor(t, "the private message's new link", 30*time.Second, func() bool {
		m, _ := d.tg.SentMessage(alice, msg.ID)
		b := linkButton(m)
		return b.URL != "" && b.URL != link.URL
	})

	// Eve, an admin (TELEGRAM_ADMINS), takes over: New link in the group
	// sends it to her private chat, and her Telegram data opens it; alice's
	// private message is closed.
	d.press(groupChat, eve, g, "🔄 New link")
	var eveLink telegramtest.Button
	testkit.WaitFor(t, "the link in the admin's private chat", 30*time.Second, func() bool {
		for _, m := range d.tg.Sent(eve) {
			eveLink = linkButton(m)
		}
		return eveLink.WebApp
	})
	if auth, frame := openAs(t, d, addr, eveLink.URL, eve); auth != http.StatusNoContent || frame != http.StatusOK {
		t.Fatalf("the admin's initData: auth %d, frame %d; want 204 and 200", auth, frame)
	}
	testkit.WaitFor(t, "alice's private message closed", 30*time.Second, func() bool {
		m, _ := d.tg.SentMessage(alice, msg.ID)
		return m.Keyboard == nil && strings.Contains(m.Text, "This link was replaced by a new one.")
	})

	// Alice takes it back: New link in the group, to her private chat.
	d.press(groupChat, alice, g, "🔄 New link")
	var fresh telegramtest.Button
	testkit.WaitFor(t, "alice's new private message", 30*time.Second, func() bool {
		for _, m := range d.tg.Sent(alice) {
			if m.ID != msg.ID && linkButton(m).WebApp {
				fresh = linkButton(m)
				return true
			}
		}
		return false
	})
	return fresh
}

// groupHandoffDone checks the end: the model heard the user finished, the
// group's and alice's messages say so, and no private message keeps a
// button.
func groupHandoffDone(t *testing.T, d *daemon) {
	t.Helper()
	d.waitText(groupChat, "handoff said: ")
	if got := lastWithPrefix(d.texts(groupChat), "handoff said: "); !strings.Contains(got, "The user finished in the browser and pressed Done") {
		t.Errorf("the model heard %q, want that the user finished", got)
	}
	for _, chat := range []int64{groupChat, alice} {
		testkit.WaitFor(t, fmt.Sprintf("chat %d's hand-off message closed", chat), 30*time.Second, func() bool {
			for _, m := range d.tg.Sent(chat) {
				if strings.HasSuffix(m.Text, "<i>✅ Done: I take it from here.</i>") && m.Keyboard == nil {
					return true
				}
			}
			return false
		})
	}
	for _, chat := range []int64{alice, eve} {
		for _, m := range d.tg.Sent(chat) {
			if m.Keyboard != nil {
				t.Errorf("chat %d's message %q keeps its buttons %v after the end", chat, m.Text, m.Keyboard)
			}
		}
	}
}

// waitGroupHandoff waits for the group's hand-off message to say text.
func waitGroupHandoff(t *testing.T, d *daemon, text string) telegramtest.Message {
	t.Helper()
	var g telegramtest.Message
	testkit.WaitFor(t, "the group's hand-off message saying "+text, 60*time.Second, func() bool {
		for _, m := range d.tg.Sent(groupChat) {
			if strings.Contains(m.Text, "A hand in the browser, please") {
				g = m
				return strings.Contains(m.Text, text)
			}
		}
		return false
	})
	if !strings.Contains(g.Text, "Tap the button, then type the code") {
		t.Errorf("the group's message %q does not give the reason", g.Text)
	}
	return g
}

// linkButton is m's button that opens a link.
func linkButton(m telegramtest.Message) telegramtest.Button {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.URL != "" {
				return b
			}
		}
	}
	return telegramtest.Button{}
}

// openAs opens link as its page does with user's Telegram data, and gives
// the statuses of the data's post and of a frame after it.
func openAs(t *testing.T, d *daemon, addr, link string, user int64) (auth, frame int) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := sessionMeta.FindSubmatch(body)
	if m == nil {
		t.Fatalf("the page %s has no session (%d)", link, resp.StatusCode)
	}
	init := strings.TrimPrefix(liveviewtest.MiniAppFragment(d.tg.Token(), user, time.Now()), "#")
	data := init[len("tgWebAppData="):strings.Index(init, "&tgWebAppThemeParams")]
	auth = post(t, "http://"+addr+"/live/s/auth", string(m[1]), mustUnescape(t, data))
	req, _ := http.NewRequest("GET", "http://"+addr+"/live/s/frame", nil)
	req.Header.Set("X-Live-Session", string(m[1]))
	fr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	fr.Body.Close()
	return auth, fr.StatusCode
}

// groupGotNoLink fails if any call the bot made to the group carried the
// live view's link or a Mini App button.
func groupGotNoLink(t *testing.T, tg *telegramtest.Fake) {
	t.Helper()
	n := 0
	for _, req := range tg.Requests() {
		if req.ChatID() != groupChat {
			continue
		}
		n++
		for k, v := range req.Params {
			if strings.Contains(v, "/live/") || strings.Contains(v, "web_app") {
				t.Errorf("%s to the group carries the link: %s=%s", req.Method, k, v)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d calls to the group; want the hand-off's message, its edits and the answer", n)
	}
}
