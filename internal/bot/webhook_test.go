package bot

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testSecret = "s3cret-Token_for-tests"

// webhookBot is a bot in webhook mode whose handler an httptest server
// serves at /tg/hook, as main serves it on HTTP_ADDR.
func webhookBot(t *testing.T, edit ...func(*testOptions)) (*harness, *httptest.Server) {
	t.Helper()
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tg/hook" {
			http.NotFound(w, r)
			return
		}
		(*handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h := newBot(t, func(o *testOptions) {
		o.WebhookURL = srv.URL + "/tg/hook"
		o.WebhookSecret = testSecret
		for _, e := range edit {
			e(o)
		}
	})
	hd := h.tg.WebhookHandler()
	handler.Store(&hd)
	return h, srv
}

// waitHealthy waits until the bot in webhook mode has registered its
// webhook: it publishes its commands right after.
func waitHealthy(t *testing.T, h *harness) {
	t.Helper()
	if _, err := h.fake.WaitFor("setMyCommands", 1, waitLong); err != nil {
		t.Fatalf("%v; log:\n%s", err, h.logs)
	}
	if ok, detail := h.tg.Health(time.Now(), time.Minute); !ok {
		t.Fatalf("bot not healthy: %s", detail)
	}
}

// With a webhook URL the bot registers the webhook instead of polling, and
// the updates Telegram posts reach the chats as polled ones do.
func TestWebhookReceivesUpdates(t *testing.T) {
	h, srv := webhookBot(t)
	if _, detail := h.tg.Health(time.Now(), time.Minute); !strings.HasPrefix(detail, "starting") {
		t.Errorf("health before Run = %q", detail)
	}
	h.run(t)
	waitHealthy(t, h)

	set := h.fake.RequestsFor("setWebhook")
	if len(set) != 1 || set[0].Params["url"] != srv.URL+"/tg/hook" || set[0].Params["secret_token"] != testSecret ||
		!strings.Contains(set[0].Params["allowed_updates"], "message") {
		t.Fatalf("setWebhook requests: %+v", set)
	}
	h.fake.Message(alice, alice, "hello by webhook")
	h.fake.Message(alice, alice, "/help")
	h.fake.Message(bob, bob, "second chat")
	h.sess.waitCalls(t, "deliver", 2)
	if got := h.sess.callsWith("deliver"); !slices.Contains(got, "deliver 1001 hello by webhook") || !slices.Contains(got, "deliver 1002 second chat") {
		t.Errorf("delivered %q", got)
	}
	if texts := h.texts(t, alice, 1); !strings.Contains(texts[0], "/new") {
		t.Errorf("/help answered %q", texts[0])
	}
	for _, r := range h.fake.RequestsFor("webhook") {
		if r.Status != http.StatusOK {
			t.Errorf("the bot answered a post with %d", r.Status)
		}
	}
	if n := len(h.fake.RequestsFor("getUpdates")) + len(h.fake.RequestsFor("deleteWebhook")); n != 0 {
		t.Errorf("%d getUpdates/deleteWebhook calls in webhook mode", n)
	}
	if _, detail := h.tg.Health(time.Now(), time.Minute); !strings.Contains(detail, "last update") {
		t.Errorf("health = %q", detail)
	}
}
