package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

const testSecret = "s3cret-Token_for-tests"

// webhookClient is a Client in webhook mode whose handler an httptest
// server serves at /tg/hook, as main serves it on HTTP_ADDR.
type webhookClient struct {
	c      *Client
	fake   *telegramtest.Fake
	srv    *httptest.Server
	logs   *testkit.SyncBuffer
	handed atomic.Int64 // updates handed to the handler
}

func newWebhookClient(t *testing.T) *webhookClient {
	t.Helper()
	w := &webhookClient{fake: telegramtest.New(t), logs: &testkit.SyncBuffer{}}
	var handler atomic.Pointer[http.Handler]
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tg/hook" {
			http.NotFound(rw, r)
			return
		}
		(*handler.Load()).ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	c, err := New(Options{Token: w.fake.Token(), APIURL: w.fake.URL(), WebhookURL: w.srv.URL + "/tg/hook",
		WebhookSecret: testSecret, Logger: slog.New(slog.NewTextHandler(w.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	hd := c.WebhookHandler()
	handler.Store(&hd)
	return w
}

// run connects the client, registers the webhook and serves until the
// returned stop is called (or the test ends).
func (w *webhookClient) run(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := w.c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Listen(ctx, func(u *models.Update, key int64) {
		w.handed.Add(1)
		w.c.Done(key)
	}); err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		w.c.Serve(ctx)
	}()
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			<-served
			_ = w.c.Close()
		}
	}
	t.Cleanup(stop)
	if ok, detail := w.c.Health(time.Now(), time.Minute); !ok {
		t.Fatalf("not healthy after Listen: %s", detail)
	}
	return stop
}

// Posts that are not Telegram's, or that come when the bot cannot take
// them, are refused with a status that says why, and reach no chat.
func TestWebhookRefuses(t *testing.T) {
	w := newWebhookClient(t)
	srv := w.srv
	post := func(method, secret, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/tg/hook", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if secret != "" {
			req.Header.Set(secretHeader, secret)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	update := `{"update_id":7,"message":{"message_id":1,"date":1,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"A"},"text":"sneaky"}}`

	if got := post(http.MethodPost, testSecret, update); got != http.StatusServiceUnavailable {
		t.Errorf("before Run: %d, want 503", got)
	}
	stop := w.run(t)
	for _, tc := range []struct {
		name, method, secret, body string
		want                       int
	}{
		{"no secret", http.MethodPost, "", update, http.StatusUnauthorized},
		{"wrong secret", http.MethodPost, "not-" + testSecret, update, http.StatusUnauthorized},
		{"secret prefix", http.MethodPost, testSecret[:5], update, http.StatusUnauthorized},
		{"GET", http.MethodGet, testSecret, "", http.StatusMethodNotAllowed},
		{"not JSON", http.MethodPost, testSecret, "hello", http.StatusBadRequest},
		{"too big", http.MethodPost, testSecret, `{"update_id":1,"x":"` + strings.Repeat("a", maxWebhookBody) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		if got := post(tc.method, tc.secret, tc.body); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	stop()
	if got := post(http.MethodPost, testSecret, update); got != http.StatusServiceUnavailable {
		t.Errorf("after Run: %d, want 503", got)
	}
	if ok, detail := w.c.Health(time.Now(), time.Minute); ok {
		t.Errorf("healthy after Run ended: %q", detail)
	}
	if got := w.handed.Load(); got != 0 {
		t.Errorf("%d refused posts were handed on", got)
	}
	if !strings.Contains(w.logs.String(), "wrong secret token") || strings.Contains(w.logs.String(), testSecret) {
		t.Errorf("log should note the refusal without the secret:\n%s", w.logs)
	}
}
