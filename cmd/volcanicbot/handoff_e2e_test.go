package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The browser hand-off (issue 23) through the real binary: the real
// @playwright/mcp and Chromium, a fake Bot API and a scripted model. The
// model opens a local page with a button and a field and calls
// browser_handoff; a second headless Chromium, phone-sized, opens the
// chat's button as Telegram would and taps and types through the live view;
// Done ends it; the model hears that the user finished. What was typed is
// in no model request, transcript or log.

// handoffTyped is what the phone types: searched for everywhere after.
const handoffTyped = "otp 640213"

// handOff is a scripted model: "handoff URL" navigates there, hands the
// tab over, then answers with the hand-off's result.
func handOff(req llmtest.Request) llmtest.Reply {
	_, rest, ok := strings.Cut(lastUserText(req), "handoff ") // in a group after the bot's mention
	if !ok || len(strings.Fields(rest)) == 0 {
		return llmtest.Text("?")
	}
	url := strings.Fields(rest)[0]
	res, _ := toolResultText(req)
	switch toolSteps(req) {
	case 0:
		return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
	case 1:
		return call("browser_handoff", `{"reason":"Tap the button, then type the code you got into the field."}`)
	}
	return llmtest.Text("handoff said: " + res)
}

// handoffRun is one hand-off through the binary in a browser mode (env).
// pageDone: Done is pressed in the live view; else the chat's Done button.
func handoffRun(t *testing.T, env []string, pageDone bool, how string) {
	site := liveviewtest.NewSite(t)
	phoneWS := liveviewtest.StartChromium(t)
	addr := freeAddr(t)
	env = append(env, "HTTP_ADDR="+addr, "PUBLIC_URL=http://"+addr, "HANDOFF_TIMEOUT_SECONDS=120")
	d := startDaemon(t, handOff, daemonOptions{extra: env})

	d.tg.Message(alice, alice, "handoff "+site.URL)
	site.WaitHit(t, "/")
	msg, link := waitHandoffMessage(t, d)
	if !link.WebApp || !strings.HasPrefix(link.URL, "http://"+addr+"/live/t/") {
		t.Fatalf("the private chat's button %+v, want a Mini App at http://%s/live/t/…", link, addr)
	}

	p := liveviewtest.NewPhone(t, liveviewtest.Dial(t, phoneWS), link.URL+liveviewtest.MiniAppFragment(d.tg.Token(), alice, time.Now()))
	tabWidth, host := p.WaitFrame(60 * time.Second)
	if want := strings.TrimPrefix(site.URL, "http://"); host != want {
		t.Errorf("the live view shows host %q, want %q", host, want)
	}
	screen := p.Rect("screen")
	scale := screen.W / tabWidth
	p.Tap(screen.X+100*scale, screen.Y+50*scale) // the site's button
	site.WaitHit(t, "/tap")
	p.Tap(screen.X+150*scale, screen.Y+220*scale) // the site's field
	p.TapCenter("text")                           // the live view's own box
	p.Type(handoffTyped, true)
	if got := site.WaitHit(t, "/typed"); got != handoffTyped {
		t.Fatalf("the site got %q, want %q", got, handoffTyped)
	}

	if pageDone {
		p.TapCenter("done")
	} else if _, err := d.tg.Press(alice, alice, msg.ID, "✅ Done"); err != nil {
		t.Fatal(err)
	}
	d.waitText(alice, "handoff said: ")
	if got := lastWithPrefix(d.texts(alice), "handoff said: "); !strings.Contains(got, "The user finished in the browser and pressed Done") {
		t.Errorf("the model heard %q, want that the user finished", got)
	}
	d.waitText(alice, "Done: I take it from here")
	d.waitLog(how)
	for _, u := range []string{link.URL, link.URL[:len(link.URL)-4] + "AAAA", "http://" + addr + "/live/s/frame"} {
		if code := httpStatus(t, u); code != http.StatusNotFound {
			t.Errorf("after Done %s answers %d, want 404", u, code)
		}
	}
	d.stop()
	typedNowhere(t, d)
}

// httpStatus is the status of a GET of u.
func httpStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitHandoffMessage waits for the hand-off's message in alice's chat and
// gives it and its button that opens the live view.
func waitHandoffMessage(t *testing.T, d *daemon) (telegramtest.Message, telegramtest.Button) {
	t.Helper()
	var msg telegramtest.Message
	var link telegramtest.Button
	testkit.WaitFor(t, "the hand-off's message", 60*time.Second, func() bool {
		for _, m := range d.tg.Sent(alice) {
			for _, row := range m.Keyboard {
				for _, b := range row {
					if b.URL != "" {
						msg, link = m, b
						return true
					}
				}
			}
		}
		return false
	})
	if !strings.Contains(msg.Text, "Tap the button, then type the code") {
		t.Errorf("the hand-off's message %q does not give the reason", msg.Text)
	}
	return msg, link
}

// typedNowhere fails if what the phone typed is in a model request, a file
// of the data directory (transcripts, journals) or the log. Not the per-chat
// browser's own profile: Chromium keeps a form's values for autofill
// (Web Data), as it does for what the model types.
func typedNowhere(t *testing.T, d *daemon) {
	t.Helper()
	for i, r := range d.model.Requests() {
		if strings.Contains(string(r.Body), handoffTyped) {
			t.Errorf("model request %d carries the typed text", i)
		}
	}
	if strings.Contains(d.logs.String(), handoffTyped) {
		t.Error("the log carries the typed text")
	}
	filepath.WalkDir(d.dataDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && e.Name() == "browser-profile" {
			return filepath.SkipDir
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), handoffTyped) {
			t.Errorf("%s carries the typed text", path)
		}
		return nil
	})
}

// The shared browser (the default): Done in the live view.
func TestBrowserHandoffShared(t *testing.T) {
	handoffRun(t, browserEnv(t), true, "the tab through the chat's browser session")
}

// A browser per chat: Done from the chat's button.
func TestBrowserHandoffPerChat(t *testing.T) {
	handoffRun(t, perChatBrowserEnv(t), false, "the tab through the chat's browser session")
}

// A remote browser (PLAYWRIGHT_CDP_ENDPOINT): the live view attaches to
// the chat's tab over the endpoint, after locating it through the chat's
// session. Done in the live view.
func TestBrowserHandoffRemote(t *testing.T) {
	env := browserEnv(t)
	handoffRun(t, append(env, "PLAYWRIGHT_CDP_ENDPOINT="+liveviewtest.StartChromium(t)), true,
		"the tab over the remote browser's endpoint")
}
