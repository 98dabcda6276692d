package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Four chats under PLAYWRIGHT_MAX_BROWSERS=2 each open their page and then
// take a snapshot of it, the model thinking between the two calls until
// another chat needs a browser: no chat's context is taken from under its
// turn — the others wait in line — and every snapshot shows the chat's own
// page. A chat whose context was taken between its turns is told at its
// next call.
func TestSharedBrowserTurnKeepsItsContext(t *testing.T) {
	const carol, dave = int64(300), int64(400)
	chats := []int64{alice, bob, carol, dave}
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true", "PLAYWRIGHT_MAX_BROWSERS=2",
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d,%d,%d,%d", alice, bob, carol, dave))
	srv := site(t)
	var running atomic.Pointer[daemon]
	// The model thinks between the navigation and the snapshot until some
	// chat has to wait for a browser, or has had one taken for it.
	pressure := func() bool {
		d := running.Load()
		if strings.Contains(d.logs.String(), "stopped to free a slot for another chat") {
			return true
		}
		for _, chat := range chats {
			if containsText(d.texts(chat), "Waiting for a free browser") {
				return true
			}
		}
		return false
	}
	visit := func(req llmtest.Request) llmtest.Reply {
		user := lastUserText(req)
		if !strings.HasPrefix(user, "visit ") {
			return llmtest.Text("?")
		}
		res, _ := toolResultText(req)
		switch toolSteps(req) {
		case 0:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, strings.TrimPrefix(user, "visit ")))
		case 1:
			testkit.Until(90*time.Second, pressure) // the model thinking, until another chat needs a browser
			return call("browser_snapshot", `{}`)
		}
		if m := headingRe.FindStringSubmatch(res); m != nil {
			return llmtest.Text("snapshot shows: " + m[1])
		}
		return llmtest.Text("snapshot without the page: " + capText(res, 300))
	}
	d := startDaemon(t, visit, daemonOptions{extra: env})
	running.Store(d)

	for _, chat := range chats {
		d.tg.Message(chat, chat, fmt.Sprintf("visit %s/visit-%d", srv.URL, chat))
	}
	for _, chat := range chats {
		got := d.answer(chat, "snapshot ", 180*time.Second)
		if want := fmt.Sprintf("snapshot shows: Unique heading visit-%d 7d3f", chat); got != want {
			t.Errorf("chat %d: %q, want %q", chat, got, want)
		}
	}
	waited := 0
	for _, chat := range chats {
		if containsText(d.texts(chat), "Waiting for a free browser") {
			waited++
		}
	}
	if waited != 2 {
		t.Errorf("%d chats waited in line, want 2 (the ceiling is 2)", waited)
	}

	// The chats that browsed first had their contexts taken once their
	// turns were over: told at their next call.
	var evicted []int64
	for _, chat := range chats {
		if strings.Contains(d.serverText(chat, "playwright"), "stopped for other chats (maxLive): 1") {
			evicted = append(evicted, chat)
		}
	}
	if len(evicted) != 2 {
		t.Errorf("chats %v had their contexts taken for others, want the two that browsed first", evicted)
	}
	told := 0
	for _, chat := range evicted {
		before := len(d.model.Requests())
		d.tg.Message(chat, chat, fmt.Sprintf("visit %s/again-%d", srv.URL, chat))
		if got := d.answer(chat, "snapshot shows: Unique heading again-", 180*time.Second); got != fmt.Sprintf("snapshot shows: Unique heading again-%d 7d3f", chat) {
			t.Errorf("chat %d again: %q", chat, got)
		}
		for _, req := range d.model.Requests()[before:] {
			b, _ := json.Marshal(req.JSON)
			if strings.Contains(string(b), fmt.Sprintf("again-%d", chat)) &&
				strings.Contains(string(b), "was closed since its last call, to free a place for another chat (at most 2 run at once)") {
				told++
				break
			}
		}
	}
	if told != len(evicted) {
		t.Errorf("%d of the %d chats whose contexts were taken were told at their next call", told, len(evicted))
	}
}

// answer waits for the last message chat was sent that starts with prefix.
func (d *daemon) answer(chat int64, prefix string, within time.Duration) string {
	d.t.Helper()
	var got string
	if !testkit.Until(within, func() bool { got = lastWithPrefix(d.texts(chat), prefix); return got != "" }) {
		d.t.Fatalf("chat %d: no answer starting %q within %v; got %q", chat, prefix, within, d.texts(chat))
	}
	return got
}

// serverText is /mcp <name> in chat.
func (d *daemon) serverText(chat int64, name string) string {
	d.t.Helper()
	before := len(d.tg.Sent(chat))
	d.tg.Message(chat, chat, "/mcp "+name)
	d.waitTextWithin(chat, before, name+": ", 10*time.Second)
	return strings.Join(sentSince(d, chat, before), "\n")
}

func capText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
