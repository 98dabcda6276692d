package redact

import (
	"slices"
	"testing"
)

func TestHeaderSecrets(t *testing.T) {
	got := HeaderSecrets(map[string]string{
		"Authorization":       "Bearer sk-literal-0123456789",
		"X-Api-Key":           "key-abcdefghijkl",
		"Cookie":              "session=abcdefghijklmnop",
		"X-Team":              "blue-team-long-value", // not a secret name
		"X-Auth-Token":        "${env:REMOTE_TOKEN}",  // a reference: the host variable is the secret
		"Proxy-Authorization": "Basic dXNlcjpwYXNzd29yZA==",
		"X-Secret":            "short", // too short to register
	})
	want := []string{
		"Basic dXNlcjpwYXNzd29yZA==", "Bearer sk-literal-0123456789", "dXNlcjpwYXNzd29yZA==",
		"key-abcdefghijkl", "session=abcdefghijklmnop", "sk-literal-0123456789",
	}
	if !slices.Equal(got, want) {
		t.Errorf("HeaderSecrets = %q\nwant %q", got, want)
	}
}

func TestArgSecrets(t *testing.T) {
	got := ArgSecrets([]string{"--api-key", "sk-live-0123456789", "--token=ghp_abcdefghij", "--password", "hunter2hunter2",
		"--verbose", "--port", "8080", "--api-key", "${env:KEY}", "-p", "secretish-value", "--client-secret", "--next",
		"--output-dir", "/tmp/x-0123456789"})
	want := []string{"ghp_abcdefghij", "hunter2hunter2", "sk-live-0123456789"}
	if !slices.Equal(got, want) {
		t.Errorf("ArgSecrets = %q, want %q", got, want)
	}
}

func TestURLSecrets(t *testing.T) {
	cases := []struct {
		url  string
		want []string
	}{
		{"wss://chrome.browserless.io/?token=6R0W53R135510", []string{"6R0W53R135510"}},
		{"wss://connect.browserbase.com?apiKey=bb_live_0123456789", []string{"bb_live_0123456789"}},
		{"http://user:hunter2-long-pass@grid:4444/", []string{"hunter2-long-pass"}},
		{"http://127.0.0.1:9222", nil},
		{"ws://browser:3000/?headless=true&stealth=1", nil},
		{"::not a url", nil},
	}
	for _, c := range cases {
		if got := URLSecrets(c.url); !slices.Equal(got, c.want) {
			t.Errorf("URLSecrets(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}
