package telegram

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// Defaults for Options.
const (
	DefaultAPIURL = "https://api.telegram.org"
	// DefaultHTTPTimeout is above the long poll (59 s) so that an idle
	// poll is answered by Telegram, not cut by the client.
	DefaultHTTPTimeout = 90 * time.Second
)

// allowedUpdates are the kinds of update the bot asks Telegram for:
// messages and button presses.
var allowedUpdates = []string{models.AllowedUpdateMessage, models.AllowedUpdateCallbackQuery}

// pollTimeout is what go-telegram/bot derives getUpdates' timeout from
// (pollTimeout - 1 s = 59 s).
const pollTimeout = 60 * time.Second

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN); required. Register it
	// with the redactor too: the client strips it from its own lines
	// anyway.
	Token string
	// APIURL is the Bot API base URL (TELEGRAM_API_URL); DefaultAPIURL
	// when empty.
	APIURL string
	Logger *slog.Logger
	// Redactor scrubs secrets from log lines and error texts.
	Redactor interface{ Redact(string) string }
	// HTTPClient is used for every API call; a client with no timeout or
	// one below the long poll gets DefaultHTTPTimeout (on a copy).
	HTTPClient *http.Client
	// Sleep waits between retries; a timer honouring ctx when nil. Tests
	// make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// WebhookURL switches from long polling to a webhook
	// (TELEGRAM_WEBHOOK_URL): Telegram posts every update to this public
	// URL, which must reach WebhookHandler. Empty: long polling.
	WebhookURL string
	// WebhookSecret is the secret token Telegram sends with every update
	// (TELEGRAM_WEBHOOK_SECRET: 1–256 of A–Z a–z 0–9 _ -); a random one
	// per start when empty.
	WebhookSecret string
	// InboxDir is where the client journals every update until its chat
	// has taken it (inbox.go), so that a message Telegram was told the bot
	// received survives a kill: Kept hands back what the last run left.
	// Empty: no journal (a message waiting for its chat is lost when the
	// process dies).
	InboxDir string
	// Limits are the flood limits every call to a chat keeps under;
	// DefaultLimits for zero fields.
	Limits Limits
	// LocalFilesDir is a local Bot API server's working directory (its
	// --dir) as mounted here (TELEGRAM_LOCAL_FILES_DIR): a server started
	// with --local answers getFile with a path there, and the file is read
	// from this folder (localfiles.go). Empty: such an answer is
	// ErrLocalPath.
	LocalFilesDir string
	// MaxLocalFile bounds the files read from LocalFilesDir, in bytes;
	// MaxLocalFile (2,000 MB, the server's own limit) when 0 or above.
	MaxLocalFile int64
}

// New returns a Client. It does no network I/O: Connect calls getMe.
func New(o Options) (*Client, error) {
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("telegram: no token (set TELEGRAM_BOT_TOKEN)")
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	o.APIURL = strings.TrimRight(o.APIURL, "/")
	if u, err := url.Parse(o.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telegram: TELEGRAM_API_URL %q is not an http(s) URL", o.APIURL)
	}
	var webhookPath string
	if o.WebhookURL != "" {
		u, err := url.Parse(o.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("telegram: TELEGRAM_WEBHOOK_URL %q is not an https URL", o.WebhookURL)
		}
		if webhookPath = u.EscapedPath(); webhookPath == "" {
			webhookPath = "/"
		}
		if o.WebhookSecret == "" {
			o.WebhookSecret = rand.Text()
		}
		if !ValidWebhookSecret(o.WebhookSecret) {
			return nil, errors.New("telegram: TELEGRAM_WEBHOOK_SECRET must be 1–256 characters of A–Z, a–z, 0–9, _ and -")
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "telegram")
	c := newClient(httpClient(o.HTTPClient), clientOptions{
		Sleep: o.Sleep, Limits: o.Limits, Logger: logger,
		Scrub: newScrubber(o.Token, o.Redactor, o.WebhookSecret),
	})
	c.inbox = newInbox(o.InboxDir, logger)
	if o.LocalFilesDir != "" {
		c.local = &localFiles{dir: o.LocalFilesDir, token: o.Token}
		c.maxLocal = o.MaxLocalFile
		if c.maxLocal <= 0 || c.maxLocal > MaxLocalFile {
			c.maxLocal = MaxLocalFile
		}
	}
	c.webhookURL, c.webhookPath, c.secret = o.WebhookURL, webhookPath, o.WebhookSecret
	api, err := tgbot.New(o.Token,
		tgbot.WithSkipGetMe(),
		tgbot.WithServerURL(o.APIURL),
		tgbot.WithHTTPClient(pollTimeout, &pollWatcher{client: c.http, onPoll: c.polled, inbox: c.inbox}),
		tgbot.WithNotAsyncHandlers(),
		tgbot.WithAllowedUpdates(tgbot.AllowedUpdates(allowedUpdates)),
		tgbot.WithDefaultHandler(func(_ context.Context, _ *tgbot.Bot, u *models.Update) { c.take(u) }),
		tgbot.WithErrorsHandler(func(err error) {
			c.log.Warn("telegram polling", "err", c.scrub(err.Error()))
		}),
		tgbot.WithDebugHandler(func(format string, args ...any) {
			c.log.Debug(c.scrub(fmt.Sprintf(format, args...)))
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %s", c.scrub(err.Error()))
	}
	c.api = api
	return c, nil
}

// httpClient is the client for every call: the caller's (on a copy, with
// a timeout above the long poll), or one that keeps enough idle
// connections to the Bot API that many chats answering at once do not
// dial a new connection each (the default keeps two per host).
func httpClient(given *http.Client) *http.Client {
	if given != nil {
		c := *given
		if c.Timeout == 0 || c.Timeout <= pollTimeout {
			c.Timeout = DefaultHTTPTimeout
		}
		return &c
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.MaxConnsPerHost = 64
	return &http.Client{Timeout: DefaultHTTPTimeout, Transport: tr}
}

// receiver is the receiving side's state.
type receiver struct {
	inbox      *inbox
	handler    atomic.Pointer[Handler]
	me         models.User // set by Connect
	webhookURL string
	// webhookPath is the path of WebhookURL; empty when polling.
	webhookPath string
	secret      string       // the webhook's secret token
	accepting   atomic.Bool  // the webhook handler may hand updates on
	webhookSet  atomic.Bool  // setWebhook succeeded
	lastUpdate  atomic.Int64 // unix nanoseconds of the last webhook post taken
	lastPoll    atomic.Int64 // unix nanoseconds of the last good getUpdates
}
