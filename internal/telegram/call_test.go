package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tgbot "github.com/go-telegram/bot"
)

type replacer struct{ r *strings.Replacer }

func (r replacer) Redact(s string) string { return r.r.Replace(s) }

func TestBackoffClassifiesWrappedErrors(t *testing.T) {
	r := &retrier{base: 500 * time.Millisecond, max: 8 * time.Second}
	tooMany := &tgbot.TooManyRequestsError{Message: "too many requests", RetryAfter: 3}
	tests := []struct {
		name  string
		err   error
		try   int
		wait  time.Duration
		retry bool
	}{
		{"429", tooMany, 1, 3 * time.Second, true},
		{"wrapped 429", fmt.Errorf("send: %w", tooMany), 1, 3 * time.Second, true},
		{"429 without retry_after", &tgbot.TooManyRequestsError{}, 1, time.Second, true},
		{"400", fmt.Errorf("%w, Bad Request: x", tgbot.ErrorBadRequest), 1, 0, false},
		{"403", fmt.Errorf("%w, Forbidden", tgbot.ErrorForbidden), 1, 0, false},
		{"500", errors.New("error response from telegram for method sendMessage, 500 Internal Server Error"), 2, time.Second, true},
		{"network", errors.New("error do request for method sendMessage, dial tcp: connection refused"), 3, 2 * time.Second, true},
		{"capped", errors.New("eof"), 10, 8 * time.Second, true},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), 1, 0, false},
	}
	for _, tt := range tests {
		wait, retry := r.backoff(tt.err, tt.try)
		if wait != tt.wait || retry != tt.retry {
			t.Errorf("%s: backoff = %v, %v; want %v, %v", tt.name, wait, retry, tt.wait, tt.retry)
		}
	}
}

func TestScrubber(t *testing.T) {
	const token = "555:AASecretPartOfTheTokenQQQ"
	scrub := newScrubber(token, replacer{strings.NewReplacer("hunter2", "[redacted]")}, "")
	in := `parse "http://x/bot555:AASecretPartOfTheTokenQQQ/getMe": bad; half AASecretPartOfTheTokenQQQ; hunter2`
	if got := scrub(in); strings.Contains(got, "SecretPart") || strings.Contains(got, "hunter2") {
		t.Errorf("scrub = %q", got)
	}
	err := &callError{method: "getMe", msg: scrub(in), err: errors.New(in)}
	if strings.Contains(err.Error(), "SecretPart") {
		t.Errorf("callError = %q", err)
	}
}
