package telegram

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
)

// Retry policy of every Bot API call. Calls to a chat go through the
// sender, which applies the same backoff and holds the chat on a 429.
const (
	defaultTries     = 5
	defaultBaseDelay = 500 * time.Millisecond
	defaultMaxDelay  = 8 * time.Second
)

// retrier is the retry policy: a 429 waits for its retry_after, a 5xx or
// a network error backs off exponentially, up to tries attempts in all;
// other errors (400, 401, 403, 404, 409) are final at once. do runs the
// calls to no chat (getMe, setWebhook, …) and file downloads with it; the
// sender applies backoff to the calls of a chat, and holds the whole chat
// on a 429.
type retrier struct {
	sleep func(ctx context.Context, d time.Duration) error
	tries int
	base  time.Duration
	max   time.Duration
	log   *slog.Logger
	scrub func(string) string
}

// do runs fn until it succeeds or the policy gives up, and returns the last
// error wrapped with method. The caller logs a final failure (with the chat
// id): nothing is dropped silently.
func (r *retrier) do(ctx context.Context, chatID int64, method string, fn func(context.Context) error) error {
	tries := r.tries
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		wait, retry := r.backoff(err, try)
		if !retry || try >= tries || ctx.Err() != nil {
			return &callError{method: method, msg: r.scrub(err.Error()), err: err}
		}
		r.log.Debug("telegram call failed; retrying", "method", method, "chat", chatID,
			"try", try, "wait", wait, "err", r.scrub(err.Error()))
		if err := r.sleep(ctx, wait); err != nil {
			return &callError{method: method, msg: r.scrub(err.Error()), err: err}
		}
	}
}

// call is do for methods with a result.
func call[T any](ctx context.Context, r *retrier, chatID int64, method string, fn func(context.Context) (T, error)) (T, error) {
	var out T
	err := r.do(ctx, chatID, method, func(ctx context.Context) error {
		v, err := fn(ctx)
		if err == nil {
			out = v
		}
		return err
	})
	return out, err
}

// backoff says whether err is worth another try, and after how long.
func (r *retrier) backoff(err error, try int) (time.Duration, bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTooBig) {
		return 0, false // a file over the limit stays over it
	}
	var tooMany *tgbot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return time.Duration(max(tooMany.RetryAfter, 1)) * time.Second, true
	}
	switch code := StatusOf(err); {
	case code >= 500, code == 0: // server trouble, network, unreadable answer
		d := r.base << (try - 1)
		if d > r.max || d <= 0 {
			d = r.max
		}
		return d, true
	default: // 4xx: the request itself is refused
		return 0, false
	}
}

// defaultStatus matches go-telegram/bot's error for codes it has no
// sentinel for ("error response from telegram for method sendMessage, 500
// Internal Server Error").
var defaultStatus = regexp.MustCompile(`error response from telegram for method \w+, (\d{3})\b`)

// StatusOf is the Bot API error code of err, or 0 when err did not come
// from an API answer (a network error, an unreadable body).
func StatusOf(err error) int {
	var tooMany *tgbot.TooManyRequestsError
	var migrate *tgbot.MigrateError
	var status *statusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &status):
		return status.code
	case errors.As(err, &tooMany):
		return 429
	case errors.As(err, &migrate), errors.Is(err, tgbot.ErrorBadRequest):
		return 400
	case errors.Is(err, tgbot.ErrorUnauthorized):
		return 401
	case errors.Is(err, tgbot.ErrorForbidden):
		return 403
	case errors.Is(err, tgbot.ErrorNotFound):
		return 404
	case errors.Is(err, tgbot.ErrorConflict):
		return 409
	}
	if m := defaultStatus.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		return code
	}
	return 0
}

// callError is a failed call: its text is scrubbed of the token and
// secrets, and it unwraps to go-telegram/bot's error.
type callError struct {
	method string
	msg    string
	err    error
}

func (e *callError) Error() string { return e.method + ": " + e.msg }
func (e *callError) Unwrap() error { return e.err }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newScrubber returns a function that removes the webhook secret, the bot
// token (go-telegram/bot puts it in URLs) and then every secret the
// redactor knows.
func newScrubber(token string, r interface{ Redact(string) string }, webhookSecret string) func(string) string {
	return func(s string) string {
		if len(webhookSecret) >= 8 {
			s = strings.ReplaceAll(s, webhookSecret, "<webhook-secret>")
		}
		if token != "" {
			s = strings.ReplaceAll(s, token, "<bot-token>")
			// The token's secret half alone is a secret too.
			if _, secret, ok := strings.Cut(token, ":"); ok && len(secret) >= 8 {
				s = strings.ReplaceAll(s, secret, "<bot-token>")
			}
		}
		if r != nil {
			s = r.Redact(s)
		}
		return s
	}
}
