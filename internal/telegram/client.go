package telegram

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	tgbot "github.com/go-telegram/bot"
)

// clientOptions configure the calls a Client makes. Zero values take the
// defaults.
type clientOptions struct {
	// Sleep waits between retries; a timer honouring ctx when nil. Tests
	// make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// Limits are the flood limits every call to a chat keeps under;
	// DefaultLimits for zero fields.
	Limits Limits
	Logger *slog.Logger
	// Scrub removes the token and secrets from error texts; identity when
	// nil.
	Scrub func(string) string
}

// Client is the one way out to the Bot API: calls to a chat go through
// the paced sender (one queue per chat, in order, under Limits, a 429
// holding only that chat), calls to no chat through the same retry
// policy without the queue. Its methods are safe for concurrent use.
type Client struct {
	api   *tgbot.Bot
	http  *http.Client
	rt    *retrier
	out   *sender
	log   *slog.Logger
	scrub func(string) string
	// local reads the files of a local Bot API server (nil: none), up to
	// maxLocal bytes.
	local    *localFiles
	maxLocal int64
	receiver
}

// newClient returns a Client whose calls go through httpClient; New sets
// its api and receiving side. It does no I/O.
func newClient(httpClient *http.Client, o clientOptions) *Client {
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	rt := &retrier{sleep: o.Sleep, tries: defaultTries, base: defaultBaseDelay, max: defaultMaxDelay, log: o.Logger, scrub: o.Scrub}
	return &Client{http: httpClient, rt: rt, out: newSender(rt, o.Limits, o.Logger), log: o.Logger, scrub: o.Scrub}
}

// API is the go-telegram/bot client the calls are made with: a screen
// builds its call with it and hands it to Do, Submit or Send.
func (c *Client) API() *tgbot.Bot { return c.api }

// Scrub removes the bot token, the webhook secret and the redactor's
// secrets from s.
func (c *Client) Scrub(s string) string { return c.scrub(s) }

// Do runs fn as one of chat's calls, in the chat's order and under the
// limits when p is Paced, retried on a 429, a 5xx and a network error; it
// returns fn's outcome (scrubbed), or ctx's error when ctx ends first (the
// call is then dropped if it has not started).
func (c *Client) Do(ctx context.Context, chatID int64, method string, p Pace, fn func(context.Context) error) error {
	return c.out.do(ctx, chatID, method, p, fn)
}

// DoOnce is Do without retries on 5xx and network errors (the typing
// action: the next one renews it).
func (c *Client) DoOnce(ctx context.Context, chatID int64, method string, p Pace, fn func(context.Context) error) error {
	return c.out.doOnce(ctx, chatID, method, p, fn)
}

// Submit queues fn as chat's call and returns a channel that gets its
// outcome, without waiting. A call with a key replaces a queued call of
// the same key, which then reports this one's outcome (the newest text of
// a live message wins).
func (c *Client) Submit(ctx context.Context, chatID int64, method string, p Pace, key string, fn func(context.Context) error) <-chan error {
	return c.out.submit(ctx, chatID, method, p, key, fn)
}

// Wait waits for a submitted call's outcome, or for ctx.
func (c *Client) Wait(ctx context.Context, method string, done <-chan error) error {
	return c.out.wait(ctx, method, done)
}

// Send is Do for methods with a result.
func Send[T any](ctx context.Context, c *Client, chatID int64, method string, p Pace, fn func(context.Context) (T, error)) (T, error) {
	return send(ctx, c.out, chatID, method, p, fn)
}

// Call runs a call to no chat (getMe, setWebhook, …) under the retry
// policy, without the chat queues.
func Call[T any](ctx context.Context, c *Client, method string, fn func(context.Context) (T, error)) (T, error) {
	return call(ctx, c.rt, 0, method, fn)
}

// Stats counts the calls made to the chats so far.
func (c *Client) Stats() SendStats { return c.out.Stats() }

// Close waits for the calls still queued for the chats (each ends with
// its context) and releases the update journal. Call it after receiving
// ended and the chats were closed: until then they report the updates
// they take.
func (c *Client) Close() error {
	c.out.close()
	return c.inbox.close()
}
