package bot

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/pairing"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
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

// Options configure a Bot. Zero values take the defaults.
type Options struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN); required. Register it
	// with the redactor too: the bot strips it from its own lines anyway.
	Token string
	// APIURL is the Bot API base URL (TELEGRAM_API_URL); DefaultAPIURL
	// when empty.
	APIURL string
	// AllowedUsers are the Telegram user ids that may use the bot; empty
	// means nobody (default deny).
	AllowedUsers []int64
	// LoginCallback is the public address of LoginCallbackHandler (on
	// HTTP_ADDR, reachable from the admin's browser): /mcp login has the
	// browser come back there and finishes by itself. Empty: the admin
	// pastes the address back.
	LoginCallback string
	// Admins may use the bot too, and decide what only admins may
	// (TELEGRAM_ADMINS): approvals in groups, adding users (/allow).
	Admins []int64
	// Pairing keeps the users admins added and the codes strangers are
	// refused with (internal/pairing); nil: only the lists above, and a
	// refusal names TELEGRAM_ALLOWED_USERS.
	Pairing *pairing.Store
	// Sessions receives messages and commands; it may instead be set with
	// SetSessions before Run.
	Sessions Sessions
	// Usage answers /usage and /allow_more; nil: usage is not recorded.
	Usage  Usage
	Logger *slog.Logger
	// Redactor scrubs secrets from log lines, tool summaries and /mcp
	// texts.
	Redactor interface{ Redact(string) string }
	// HTTPClient is used for every API call; a client with no timeout or
	// one below the long poll gets DefaultHTTPTimeout (on a copy).
	HTTPClient *http.Client
	// Sleep waits between retries; a timer honouring ctx when nil. Tests
	// make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// AlbumWait is how long the parts of an album (photos sent together)
	// are collected after the last one arrived; DefaultAlbumWait when 0.
	AlbumWait time.Duration
	// WebhookURL switches from long polling to a webhook
	// (TELEGRAM_WEBHOOK_URL): Telegram posts every update to this public
	// URL, which must reach WebhookHandler. Empty: long polling.
	WebhookURL string
	// WebhookSecret is the secret token Telegram sends with every update
	// (TELEGRAM_WEBHOOK_SECRET: 1–256 of A–Z a–z 0–9 _ -); a random one
	// per start when empty.
	WebhookSecret string
	// InboxDir is where the bot journals every update until its chat has
	// taken it (inbox.go), so that a message Telegram was told the bot
	// received survives a kill: Run hands in again what the last run left.
	// Empty: no journal (a message waiting for its chat is lost when the
	// process dies).
	InboxDir string
	// Limits are the flood limits every call to a chat keeps under;
	// DefaultLimits for zero fields.
	Limits telegram.Limits
	// NoDrafts streams answers by editing a message in every chat, never
	// with sendMessageDraft (which private chats otherwise get while the
	// Bot API takes it).
	NoDrafts bool
}

// Bot is the Telegram bot: Run polls, and Chat is the session's chat port.
type Bot struct {
	o      Options
	log    *slog.Logger
	scrub  func(string) string
	tg     *telegram.Client
	chat   *Chat
	access *access
	disp   *dispatcher
	albums *albums
	inbox  *inbox
	logins logins // /mcp login waiting for the admin's pasted address

	client   *http.Client
	sessions Sessions
	me       models.User // set by Run before polling starts
	started  atomic.Bool
	lastPoll atomic.Int64 // unix nanoseconds of the last good getUpdates

	webhookPath string       // the path of WebhookURL; empty when polling
	secret      string       // the webhook's secret token
	accepting   atomic.Bool  // the webhook handler may queue updates (b.disp is set)
	webhookSet  atomic.Bool  // setWebhook succeeded
	lastUpdate  atomic.Int64 // unix nanoseconds of the last webhook post taken
}

// New returns a Bot. It does no network I/O: Run calls getMe.
func New(o Options) (*Bot, error) {
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("bot: no token (set TELEGRAM_BOT_TOKEN)")
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	o.APIURL = strings.TrimRight(o.APIURL, "/")
	if u, err := url.Parse(o.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bot: TELEGRAM_API_URL %q is not an http(s) URL", o.APIURL)
	}
	var webhookPath string
	if o.WebhookURL != "" {
		u, err := url.Parse(o.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("bot: TELEGRAM_WEBHOOK_URL %q is not an https URL", o.WebhookURL)
		}
		if webhookPath = u.EscapedPath(); webhookPath == "" {
			webhookPath = "/"
		}
		if o.WebhookSecret == "" {
			o.WebhookSecret = rand.Text()
		}
		if !ValidWebhookSecret(o.WebhookSecret) {
			return nil, errors.New("bot: TELEGRAM_WEBHOOK_SECRET must be 1–256 characters of A–Z, a–z, 0–9, _ and -")
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "bot")
	// Many chats answer at once: keep enough idle connections to the Bot
	// API that sends do not dial a new connection each (the default keeps
	// two per host).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.MaxConnsPerHost = 64
	client := &http.Client{Timeout: DefaultHTTPTimeout, Transport: tr}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		if c.Timeout == 0 || c.Timeout <= pollTimeout {
			c.Timeout = DefaultHTTPTimeout
		}
		client = &c
	}
	b := &Bot{
		o:        o,
		log:      logger,
		scrub:    telegram.NewScrubber(o.Token, o.Redactor, o.WebhookSecret),
		access:   newAccess(o.AllowedUsers, o.Admins),
		inbox:    newInbox(o.InboxDir, logger),
		client:   client,
		sessions: o.Sessions,

		webhookPath: webhookPath,
		secret:      o.WebhookSecret,
	}
	tg, err := tgbot.New(o.Token,
		tgbot.WithSkipGetMe(),
		tgbot.WithServerURL(o.APIURL),
		tgbot.WithHTTPClient(pollTimeout, &pollWatcher{client: client, onPoll: b.polled, inbox: b.inbox}),
		tgbot.WithNotAsyncHandlers(),
		tgbot.WithAllowedUpdates(tgbot.AllowedUpdates(allowedUpdates)),
		tgbot.WithDefaultHandler(b.onUpdate),
		tgbot.WithMiddlewares(b.recoverMiddleware),
		tgbot.WithErrorsHandler(func(err error) {
			b.log.Warn("telegram polling", "err", errText(b.scrub, err))
		}),
		tgbot.WithDebugHandler(func(format string, args ...any) {
			b.log.Debug(b.scrub(fmt.Sprintf(format, args...)))
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("bot: %s", b.scrub(err.Error()))
	}
	b.tg = telegram.NewClient(tg, client, telegram.ClientOptions{Sleep: o.Sleep, Limits: o.Limits, Logger: logger, Scrub: b.scrub})
	if o.AlbumWait <= 0 {
		o.AlbumWait = DefaultAlbumWait
	}
	b.albums = newAlbums(o.AlbumWait, b.flushAlbum)
	b.chat = newChat(b.tg, logger, b.scrub)
	b.chat.streamDrafts = !o.NoDrafts
	b.chat.isAdmin = b.access.isAdmin
	b.access.added, b.access.log, b.access.scrub = o.Pairing, logger, b.scrub
	return b, nil
}

// Chat is the session's chat port, usable before Run.
func (b *Bot) Chat() *Chat { return b.chat }

// SetSessions sets the session manager when it could not be given to New
// (it needs Chat first). Call it before Run.
func (b *Bot) SetSessions(s Sessions) { b.sessions = s }

// LastPoll is when Telegram last answered the poller: the start-up calls,
// then each successful getUpdates (zero before the bot started). A health
// check can tell a stuck poller from an idle one, since an idle long poll
// still returns every 59 s.
func (b *Bot) LastPoll() time.Time {
	ns := b.lastPoll.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (b *Bot) polled() { b.lastPoll.Store(time.Now().UnixNano()) }

// Run learns the bot's name (getMe), publishes the commands and receives
// updates until ctx ends — by long polling (after removing any webhook) or,
// with a WebhookURL, by registering the webhook — then waits for the
// chats' workers. It returns nil on a clean shutdown, and an error when
// Telegram refuses the token or the bot cannot start.
func (b *Bot) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	if b.sessions == nil {
		return errors.New("bot: no Sessions (set Options.Sessions or call SetSessions)")
	}
	b.disp = newDispatcher(ctx, b.runJob)
	defer b.disp.wait()
	if err := b.start(ctx); err != nil {
		b.accepting.Store(false)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	b.polled() // Telegram answered at start: alive until the first long poll returns
	if b.webhookPath != "" {
		b.log.Info("receiving updates by webhook", "bot", "@"+b.me.Username, "url", b.scrub(b.o.WebhookURL))
		<-ctx.Done()
		b.accepting.Store(false) // Telegram retries what arrives from now on
	} else {
		b.log.Info("polling for updates", "bot", "@"+b.me.Username)
		b.tg.API().Start(ctx) // returns when ctx ends
	}
	b.disp.wait()
	b.log.Info("stopped receiving updates")
	return nil
}

func (b *Bot) start(ctx context.Context) error {
	me, err := telegram.Call(ctx, b.tg, "getMe", b.tg.API().GetMe)
	if err != nil {
		if telegram.StatusOf(err) == http.StatusUnauthorized || telegram.StatusOf(err) == http.StatusNotFound {
			return fmt.Errorf("telegram refused the bot token (check TELEGRAM_BOT_TOKEN): %w", err)
		}
		return fmt.Errorf("start: %w", err)
	}
	b.me = *me
	// The journal is the bot's: its updates are keyed by getMe's id.
	if err := b.inbox.open(me.ID); err != nil {
		return err
	}
	switch {
	case b.access.empty():
		b.log.Warn("TELEGRAM_ALLOWED_USERS is empty: nobody can use the bot; every user gets their id to add")
	case b.o.Pairing != nil:
		added, err := b.o.Pairing.Users()
		if err != nil {
			b.log.Error("the users added by admins cannot be read: only the listed users are allowed", "err", errText(b.scrub, err))
		}
		b.log.Info("allowlist", "users", b.access.count(), "admins", len(b.o.Admins), "added", len(added))
	default:
		b.log.Info("allowlist", "users", b.access.count())
	}
	// What the last run took from Telegram but its chats had not taken
	// yet goes first, in order, before any new update.
	if kept := b.inbox.replay(); len(kept) > 0 {
		b.log.Info("handling the messages the last run had not answered", "updates", len(kept))
		for i := range kept {
			b.dispatch(&kept[i].update, kept[i].key, true)
		}
	}
	if b.webhookPath != "" {
		// Updates may arrive as soon as the webhook is set.
		b.accepting.Store(true)
		if _, err := telegram.Call(ctx, b.tg, "setWebhook", func(ctx context.Context) (bool, error) {
			return b.tg.API().SetWebhook(ctx, &tgbot.SetWebhookParams{
				URL:            b.o.WebhookURL,
				SecretToken:    b.secret,
				AllowedUpdates: allowedUpdates,
			})
		}); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		b.webhookSet.Store(true)
	} else if _, err := telegram.Call(ctx, b.tg, "deleteWebhook", func(ctx context.Context) (bool, error) {
		return b.tg.API().DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{})
	}); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if _, err := telegram.Call(ctx, b.tg, "setMyCommands", func(ctx context.Context) (bool, error) {
		return b.tg.API().SetMyCommands(ctx, &tgbot.SetMyCommandsParams{Commands: botCommands()})
	}); err != nil {
		b.log.Warn("could not publish the command list", "err", err.Error())
	}
	return nil
}

// Close waits for the calls still queued for the chats (each ends with
// its context) and releases the update journal. Call it after Run
// returned and the sessions were closed: until then they report the
// messages they take.
func (b *Bot) Close() error {
	b.tg.Close()
	return b.inbox.close()
}

// SendStats counts the calls made to the chats so far.
func (b *Bot) SendStats() telegram.SendStats { return b.tg.Stats() }

// onUpdate runs on the poller: it only queues the message on its chat's
// worker. An update the inbox has handed out already (Telegram sent it
// again after a restart) is skipped, and the log says so.
func (b *Bot) onUpdate(_ context.Context, _ *tgbot.Bot, u *models.Update) {
	key, ok := b.inbox.claim(u.ID)
	if !ok {
		b.log.Warn("update sent again by Telegram (the last run had it but had not confirmed it): handled once",
			"update", u.ID)
		return
	}
	b.dispatch(u, key, false)
}

// dispatch queues u on its chat's worker. The update is done in the inbox
// when its job ends, unless the job handed the message on (to a session,
// which marks it done when it takes it, or to an album). key is its entry
// in the inbox; replayed: it was kept from the last run.
func (b *Bot) dispatch(u *models.Update, key int64, replayed bool) {
	m := u.Message
	if cq := u.CallbackQuery; cq != nil {
		// A button press: settled here, at once (a replayed one has
		// expired with the run that asked).
		b.onCallback(b.disp.ctx, cq)
		b.inbox.done(key)
		return
	}
	if m == nil {
		b.inbox.done(key)
		return
	}
	job := func(ctx context.Context) {
		kept := false
		defer func() { // a panic too: the chat is answered, and the update done
			if !kept {
				b.inbox.done(key)
			}
		}()
		kept = b.handleMessage(ctx, m, []int64{key}, replayed)
	}
	submit := b.disp.submit
	if replayed {
		submit = b.disp.submitKept // accepted under the cap once already
	}
	ok := submit(m.Chat.ID, job)
	switch {
	case ok:
	case b.disp.closing():
		// Stopping: the inbox keeps it for the next start.
	default:
		b.log.Warn("chat queue full: update dropped", "chat", m.Chat.ID, "update", u.ID)
		b.inbox.done(key)
	}
}

// pollWatcher sits between the poller and the HTTP client: it records
// successful getUpdates calls for LastPoll, journals the updates of each
// answer before the poller sees them (so before the next getUpdates
// confirms them to Telegram), and tells the inbox which updates Telegram
// has forgotten (those below the offset of an answered getUpdates).
type pollWatcher struct {
	client *http.Client
	onPoll func()
	inbox  *inbox
}

func (p *pollWatcher) Do(req *http.Request) (*http.Response, error) {
	if path.Base(req.URL.Path) != "getUpdates" {
		return p.client.Do(req)
	}
	var offset int64
	if p.inbox.enabled() {
		var err error
		if offset, req, err = getUpdatesOffset(req); err != nil {
			return nil, err
		}
	}
	resp, err := p.client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	p.onPoll()
	if !p.inbox.enabled() {
		return resp, nil
	}
	if offset > 0 {
		p.inbox.confirm(offset)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody))
	resp.Body.Close()
	if err != nil {
		return nil, err // nothing was handed on: the poller asks again
	}
	p.inbox.journalResponse(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// maxUpdatesBody bounds a getUpdates answer read (at most 100 updates).
const maxUpdatesBody = 64 << 20
