package telegramtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"
)

// webhookRetry is how long the fake waits before posting an update again
// after the bot did not answer 200.
const webhookRetry = 50 * time.Millisecond

// setWebhook makes the fake post updates to url, with secret in the
// X-Telegram-Bot-Api-Secret-Token header, as Telegram does; getUpdates is
// refused while a webhook is set. Unlike Telegram, it accepts http URLs
// (tests serve the bot on 127.0.0.1).
func (f *Fake) setWebhook(p map[string]string) (any, error) {
	url := p["url"]
	if url == "" {
		return f.deleteWebhook(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.webhookURL, f.webhookSecret = url, p["secret_token"]
	if raw := p["allowed_updates"]; raw != "" {
		var allowed []string
		if json.Unmarshal([]byte(raw), &allowed) == nil {
			f.allowed = allowed
		}
	}
	if !f.delivering {
		f.delivering = true
		go f.deliver()
	}
	f.notifyLocked()
	return true, nil
}

func (f *Fake) deleteWebhook(p map[string]string) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.webhookURL, f.webhookSecret = "", ""
	if p["drop_pending_updates"] == "true" {
		f.updates = nil
	}
	f.notifyLocked()
	return true, nil
}

func (f *Fake) webhookInfo() models.WebhookInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return models.WebhookInfo{URL: f.webhookURL, PendingUpdateCount: len(f.updates)}
}

// WebhookURL is the URL of the webhook set, or "" when none is.
func (f *Fake) WebhookURL() string { return f.webhookInfo().URL }

// deliver posts pending updates to the webhook, one at a time and in
// order, while one is set. Each post is recorded as a request of the
// method "webhook" with the bot's answer as its status; an update the bot
// did not take with 200 is posted again.
func (f *Fake) deliver() {
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		f.mu.Lock()
		url, secret := f.webhookURL, f.webhookSecret
		var next *models.Update
		f.updates = filterAllowed(f.updates, f.allowed)
		if url != "" && len(f.updates) > 0 {
			u := f.updates[0]
			next = &u
		}
		ch := f.changed
		f.mu.Unlock()
		if next == nil {
			select {
			case <-ch:
				continue
			case <-f.closed:
				return
			}
		}
		status := f.post(client, url, secret, next)
		f.record(Request{Method: "webhook", Time: time.Now(),
			Params: map[string]string{"url": url, "update_id": strconv.FormatInt(next.ID, 10)}}, status)
		if status == http.StatusOK {
			f.mu.Lock()
			if len(f.updates) > 0 && f.updates[0].ID == next.ID {
				f.updates = f.updates[1:]
			}
			f.notifyLocked()
			f.mu.Unlock()
			continue
		}
		select {
		case <-time.After(webhookRetry):
		case <-f.closed:
			return
		}
	}
}

// post sends one update and returns the answer's status (0 when there was
// none).
func (f *Fake) post(client *http.Client, url, secret string, u *models.Update) int {
	body, err := json.Marshal(u)
	if err != nil {
		return 0
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
