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
