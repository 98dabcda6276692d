package redact

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestRegistryAdd(t *testing.T) {
	tests := []struct {
		name string
		add  []string
		in   string
		want string
	}{
		{"empty registry", nil, "abcdefgh", "abcdefgh"},
		{"registered", []string{"abcdefgh"}, "x abcdefgh y", "x [REDACTED] y"},
		{"shorter than MinSecretLen ignored", []string{"1234567"}, "1234567", "1234567"},
		{"exactly MinSecretLen", []string{"12345678"}, "12345678", "[REDACTED]"},
		{"length counts characters", []string{"пароль12", "пароль1"}, "пароль12 пароль1", "[REDACTED] пароль1"},
		{"white space only ignored", []string{"          ", "\t\t\t\t\n\n\n\n"}, "a          b", "a          b"},
		{"empty ignored", []string{""}, "abc", "abc"},
		{"trimmed form", []string{"token-from-file\n"}, "got token-from-file.", "got [REDACTED]."},
		{"trimmed form too short", []string{"  short\n  "}, "short", "short"},
		{"JSON-escaped form", []string{"line one\nline \"two\""}, `{"text":"line one\nline \"two\""}`, `{"text":"[REDACTED]"}`},
		{"HTML-escaped JSON form", []string{"a<b>&cdefgh"}, `{"v":"a\u003cb\u003e\u0026cdefgh"}`, `{"v":"[REDACTED]"}`},
		{"raw form still matched", []string{"line one\nline two"}, "line one\nline two", "[REDACTED]"},
		{"several", []string{"first-secret", "second-secret"}, "first-secret/second-secret", "[REDACTED]/[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			r.Add(tt.add...)
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := string(r.RedactBytes([]byte(tt.in))); got != tt.want {
				t.Errorf("RedactBytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRegistryZeroAndNil(t *testing.T) {
	var zero Registry
	zero.Add("abcdefgh")
	if got := zero.Redact("abcdefgh"); got != Placeholder {
		t.Errorf("zero Registry: %q", got)
	}
	var nilReg *Registry
	if got := nilReg.Redact("abcdefgh"); got != "abcdefgh" {
		t.Errorf("nil Registry: %q", got)
	}
}

func TestRegistrySnapshotIsImmutable(t *testing.T) {
	r := NewRegistry()
	r.Add("first-secret")
	snap := r.Redactor()
	r.Add("second-secret")
	if got := snap.Redact("second-secret"); got != "second-secret" {
		t.Errorf("old snapshot changed: %q", got)
	}
	if got := r.Redact("second-secret"); got != Placeholder {
		t.Errorf("registry: %q", got)
	}
	n := r.Len()
	before := r.Redactor()
	r.Add("first-secret", "short")
	if r.Len() != n || r.Redactor() != before {
		t.Errorf("re-adding known values changed the registry")
	}
}

// TestRegistryConcurrent is meant for -race: writers add secrets while readers
// redact; every secret added before a read started must be redacted by it.
func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	const writers, perWriter, readers = 4, 50, 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				r.Add(fmt.Sprintf("secret-%d-%03d", w, i))
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for i := range perWriter {
				_ = r.Redact(fmt.Sprintf("text secret-0-%03d secret-1-%03d", i, i))
				_ = r.RedactBytes([]byte("secret-2-000"))
				_ = r.Len()
			}
		})
	}
	wg.Wait()
	var all strings.Builder
	for w := range writers {
		for i := range perWriter {
			fmt.Fprintf(&all, "secret-%d-%03d ", w, i)
		}
	}
	want := strings.Repeat(Placeholder+" ", writers*perWriter)
	if got := r.Redact(all.String()); got != want {
		t.Errorf("after all writers: %q", got)
	}
}

// Each line of a multi-line secret is registered: a PEM key on a server's
// stderr is logged one line at a time, and was logged in clear.
func TestMultiLineSecretLineByLine(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n"
	r := NewRegistry()
	r.Add(key)
	for _, line := range []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"} {
		if got := r.Redact("stderr: " + line); strings.Contains(got, line) {
			t.Errorf("the line %q of the key is logged: %q", line, got)
		}
	}
}
