package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

var priceRe = regexp.MustCompile(`Price: \d+ EUR`)

// pageWatcher is the model of the browser watcher: "schedule <json>"
// calls the schedule tool; a scheduled run whose task is "watch <URL>"
// opens the page in the real browser and answers with its price.
type pageWatcher struct {
	mu      sync.Mutex
	answers int // the scheduled runs that answered
}

func (w *pageWatcher) reply(req llmtest.Request) llmtest.Reply {
	user := lastUserText(req)
	res, after := toolResultText(req)
	if !strings.Contains(wireSystem(req), "## Scheduled run") {
		if after {
			return llmtest.Text("tool: " + res)
		}
		if args, ok := strings.CutPrefix(user, "schedule "); ok {
			return call(session.ScheduleToolName, args)
		}
		return llmtest.Text("?")
	}
	if !after {
		url := strings.Fields(strings.TrimPrefix(user, "watch "))[0]
		return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
	}
	w.mu.Lock()
	w.answers++
	w.mu.Unlock()
	if m := priceRe.FindString(res); m != "" {
		return llmtest.Text(m)
	}
	return llmtest.Text("no price on the page")
}

func (w *pageWatcher) runs() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answers
}

// A watcher over a real page: the first price is sent, the same price on
// later runs is not, a new one is, with what changed first.
func TestBrowserWatcher(t *testing.T) {
	env := append(browserEnv(t), scheduleEnv...)
	var price atomic.Int64
	price.Store(10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Kettle</title></head><body><h1>Blue kettle</h1><p>Price: %d EUR</p></body></html>`, price.Load())
	}))
	t.Cleanup(srv.Close)
	model := &pageWatcher{}
	d := startDaemon(t, model.reply, daemonOptions{extra: env})
	d.tg.Message(alice, alice, fmt.Sprintf(`schedule {"task":"watch %s/kettle","every":"2s","notify":"changed"}`, srv.URL))
	d.waitText(alice, "tool: scheduled j1 (every 2s, notify changed)")
	d.waitText(alice, "Price: 10 EUR")
	testkit.WaitFor(t, "three runs of the watcher", 60*time.Second, func() bool { return model.runs() >= 3 })
	price.Store(12)
	d.waitText(alice, "Price: 12 EUR")
	d.tg.Message(alice, alice, "/jobs cancel j1")
	d.waitText(alice, "Cancelled j1")
	sent, changed := 0, ""
	for _, m := range d.tg.Sent(alice) {
		if strings.HasPrefix(m.Text, "Price: 10 EUR") {
			sent++
		}
		if strings.Contains(m.Text, "Price: 12 EUR") {
			changed = m.Text
		}
	}
	if sent != 1 || !strings.HasPrefix(changed, "What changed") {
		t.Errorf("the first price was sent %d times (want once); the change: %q", sent, changed)
	}
}
