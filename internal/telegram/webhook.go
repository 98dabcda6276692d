package telegram

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-telegram/bot/models"
)

// maxWebhookBody bounds one posted update; Telegram's are a few kilobytes.
const maxWebhookBody = 1 << 20

// secretHeader carries the webhook's secret token on every post.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// WebhookPath is the path of Options.WebhookURL, where WebhookHandler must
// be served; empty when the client polls.
func (c *Client) WebhookPath() string { return c.webhookPath }

// WebhookHandler receives Telegram's posts: it checks the secret token,
// decodes the update, journals it in the inbox and queues it on its
// chat's worker, answering at once. A missing or wrong secret gets 401, a body that is not an update
// 400 (413 above 1 MiB), and a post before Run registered the webhook or
// after it ended 503, which Telegram delivers again later.
func (c *Client) WebhookHandler() http.Handler { return http.HandlerFunc(c.serveWebhook) }

func (c *Client) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if c.webhookPath == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get(secretHeader)), []byte(c.secret)) != 1 {
		c.log.Warn("webhook post refused: missing or wrong secret token", "remote", r.RemoteAddr)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if !c.accepting.Load() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	var u models.Update
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err == nil {
		err = json.Unmarshal(raw, &u)
	}
	if err != nil {
		status := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		c.log.Warn("webhook post refused: not an update", "err", c.scrub(err.Error()))
		http.Error(w, "not an update", status)
		return
	}
	c.lastUpdate.Store(time.Now().UnixNano())
	// Journaled (and synced) before the 200 tells Telegram it arrived; a
	// failure is logged and the update handled anyway.
	_, _ = c.inbox.journal([]json.RawMessage{raw})
	c.take(&u)
	w.WriteHeader(http.StatusOK)
	c.inbox.confirmID(u.ID)
}

// Health tells whether updates are coming in, for /healthz. Polling: a
// successful getUpdates within maxAge (an idle long poll returns every
// 59 s). Webhook: the webhook registered and the handler accepting — an
// idle webhook receives nothing, so silence is no sign of trouble.
func (c *Client) Health(now time.Time, maxAge time.Duration) (ok bool, detail string) {
	if c.webhookPath != "" {
		switch {
		case !c.webhookSet.Load():
			return false, "starting: webhook not registered yet"
		case !c.accepting.Load():
			return false, "stopped: not accepting webhook posts"
		}
		last := c.lastUpdate.Load()
		if last == 0 {
			return true, "ok: webhook registered, no update received yet"
		}
		return true, "ok: webhook registered, last update " + now.Sub(time.Unix(0, last)).Round(time.Second).String() + " ago"
	}
	last := c.LastPoll()
	switch {
	case last.IsZero():
		return false, "starting: no successful getUpdates yet"
	case now.Sub(last) > maxAge:
		return false, "stalled: last successful getUpdates " + now.Sub(last).Round(time.Second).String() + " ago"
	}
	return true, "ok: last successful getUpdates " + now.Sub(last).Round(time.Second).String() + " ago"
}

// ValidWebhookSecret reports whether s is what Telegram accepts as a
// webhook's secret_token: 1–256 characters of A–Z, a–z, 0–9, _ and -.
func ValidWebhookSecret(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
