package main

import (
	"strings"
	"testing"
)

// PUBLIC_URL is an https origin (http on loopback), served on HTTP_ADDR;
// without it the webhook's origin is the live view's, and without either
// (or without the browser) there is no hand-off.
func TestPublicURL(t *testing.T) {
	tests := []struct {
		name, public, webhook, addr string
		problem, origin             string
	}{
		{"https origin", "https://bot.example.com", "", ":8080", "", "https://bot.example.com"},
		{"a trailing slash", "https://bot.example.com/", "", ":8080", "", "https://bot.example.com"},
		{"loopback http", "http://127.0.0.1:8080", "", ":8080", "", "http://127.0.0.1:8080"},
		{"http elsewhere", "http://bot.example.com", "", ":8080", "must be https", ""},
		{"a path", "https://bot.example.com/bot", "", ":8080", "origin only", ""},
		{"a query", "https://bot.example.com?x=1", "", ":8080", "origin only", ""},
		{"no host", "https:///", "", ":8080", "must be an https URL", ""},
		{"no HTTP_ADDR", "https://bot.example.com", "", "", "needs HTTP_ADDR", ""},
		{"the webhook's origin", "", "https://hook.example.com/telegram", ":8080", "", "https://hook.example.com"},
		{"neither", "", "", ":8080", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{PublicURL: tt.public, HTTPAddr: tt.addr}
			c.Telegram.WebhookURL = tt.webhook
			errs := c.validatePublicURL()
			if tt.problem == "" && len(errs) > 0 || tt.problem != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.problem)) {
				t.Fatalf("errors %v, want %q", errs, tt.problem)
			}
			if tt.problem == "" && c.publicOrigin() != tt.origin {
				t.Errorf("origin %q, want %q", c.publicOrigin(), tt.origin)
			}
		})
	}
}
