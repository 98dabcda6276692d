package telegram

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// New checks its options and does no I/O.
func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil || !strings.HasPrefix(err.Error(), "telegram: ") || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
		t.Errorf("New without a token: %v", err)
	}
	for _, u := range []string{"http://bad host", "api.telegram.org", "ftp://x"} {
		if _, err := New(Options{Token: "1:x", APIURL: u}); err == nil || !strings.Contains(err.Error(), "TELEGRAM_API_URL") {
			t.Errorf("New with API URL %q: %v", u, err)
		}
	}
}

func TestHTTPClientTimeout(t *testing.T) {
	tests := []struct {
		client *http.Client
		want   time.Duration
	}{
		{nil, DefaultHTTPTimeout},
		{&http.Client{}, DefaultHTTPTimeout},
		{&http.Client{Timeout: 60 * time.Second}, DefaultHTTPTimeout}, // cut the 59 s poll
		{&http.Client{Timeout: 120 * time.Second}, 120 * time.Second},
	}
	for _, tt := range tests {
		b, err := New(Options{Token: "1:x", HTTPClient: tt.client})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.http.Timeout; got != tt.want {
			t.Errorf("timeout %v, want %v", got, tt.want)
		}
		if tt.client != nil && tt.client.Timeout != 0 && tt.client.Timeout != 60*time.Second && tt.client.Timeout != 120*time.Second {
			t.Error("the caller's client was modified")
		}
	}
}

func TestWebhookOptions(t *testing.T) {
	for _, tc := range []struct {
		name, url, secret, err string
	}{
		{"not a URL", "telegram", "", "not an https URL"},
		{"no host", "https:///hook", "", "not an https URL"},
		{"secret with a space", "https://bot.example.test/hook", "two words", "TELEGRAM_WEBHOOK_SECRET"},
		{"secret too long", "https://bot.example.test/hook", strings.Repeat("a", 257), "TELEGRAM_WEBHOOK_SECRET"},
	} {
		_, err := New(Options{Token: "1:abcdefghij", WebhookURL: tc.url, WebhookSecret: tc.secret})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
	// Without a secret each bot gets its own random one.
	a, err := New(Options{Token: "1:abcdefghij", WebhookURL: "https://bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{Token: "1:abcdefghij", WebhookURL: "https://bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	if !ValidWebhookSecret(a.secret) || len(a.secret) < 20 || a.secret == b.secret {
		t.Errorf("random secrets %q and %q", a.secret, b.secret)
	}
	if a.WebhookPath() != "/" {
		t.Errorf("path of a URL without one = %q, want /", a.WebhookPath())
	}
}
