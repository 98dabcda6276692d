package telegram

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// Handler takes each update once: a new one from Telegram (on the poller
// or in the webhook's request — it must not block), or one the last run
// left (Kept). key is its entry in the inbox: call Done(key) once nothing
// more is needed from it.
type Handler func(u *models.Update, key int64)

// Kept is an update of the last run handed in again, with its key for
// Done.
type Kept struct {
	Key    int64
	Update models.Update
}

// Connect learns the bot's name (getMe) and opens the inbox for it (the
// journal is the bot's: its updates are keyed by getMe's id). It fails
// when Telegram refuses the token.
func (c *Client) Connect(ctx context.Context) (models.User, error) {
	me, err := call(ctx, c.rt, 0, "getMe", c.api.GetMe)
	if err != nil {
		if StatusOf(err) == http.StatusUnauthorized || StatusOf(err) == http.StatusNotFound {
			return models.User{}, fmt.Errorf("telegram refused the bot token (check TELEGRAM_BOT_TOKEN): %w", err)
		}
		return models.User{}, fmt.Errorf("start: %w", err)
	}
	c.me = *me
	if err := c.inbox.open(me.ID); err != nil {
		return models.User{}, err
	}
	return *me, nil
}

// Kept returns what the last run took from Telegram but its chats had not
// taken yet, in order: hand it in before any new update.
func (c *Client) Kept() []Kept {
	kept := c.inbox.replay()
	out := make([]Kept, len(kept))
	for i, k := range kept {
		out[i] = Kept{Key: k.key, Update: k.update}
	}
	return out
}

// Listen registers where updates go: with a WebhookURL it registers the
// webhook (updates may arrive as soon as it is set), else it removes any
// webhook, for polling. From now on new updates go to h.
func (c *Client) Listen(ctx context.Context, h Handler) error {
	c.handler.Store(&h)
	if c.webhookPath != "" {
		c.accepting.Store(true)
		if _, err := call(ctx, c.rt, 0, "setWebhook", func(ctx context.Context) (bool, error) {
			return c.api.SetWebhook(ctx, &tgbot.SetWebhookParams{
				URL:            c.webhookURL,
				SecretToken:    c.secret,
				AllowedUpdates: allowedUpdates,
			})
		}); err != nil {
			c.accepting.Store(false)
			return fmt.Errorf("start: %w", err)
		}
		c.webhookSet.Store(true)
		return nil
	}
	if _, err := call(ctx, c.rt, 0, "deleteWebhook", func(ctx context.Context) (bool, error) {
		return c.api.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{})
	}); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// Serve receives updates until ctx ends — by long polling, or by the
// webhook, whose posts it stops accepting then (Telegram retries them).
func (c *Client) Serve(ctx context.Context) {
	c.polled() // Telegram answered at start: alive until the first long poll returns
	if c.webhookPath != "" {
		c.log.Info("receiving updates by webhook", "bot", "@"+c.me.Username, "url", c.scrub(c.webhookURL))
		<-ctx.Done()
		c.accepting.Store(false)
		return
	}
	c.log.Info("polling for updates", "bot", "@"+c.me.Username)
	c.api.Start(ctx) // returns when ctx ends
}

// take hands a new update to the handler, unless the inbox has handed it
// out already (Telegram sent it again after a restart): the log says so.
func (c *Client) take(u *models.Update) {
	key, ok := c.inbox.claim(u.ID)
	if !ok {
		c.log.Warn("update sent again by Telegram (the last run had it but had not confirmed it): handled once",
			"update", u.ID)
		return
	}
	if h := c.handler.Load(); h != nil {
		(*h)(u, key)
	}
}

// Done marks updates done in the inbox: they are not handed in again.
func (c *Client) Done(keys ...int64) { c.inbox.done(keys...) }

// Journaling reports whether updates are journaled (Options.InboxDir).
func (c *Client) Journaling() bool { return c.inbox.enabled() }

// LastPoll is when Telegram last answered the poller: the start-up calls,
// then each successful getUpdates (zero before the bot started). A health
// check can tell a stuck poller from an idle one, since an idle long poll
// still returns every 59 s.
func (c *Client) LastPoll() time.Time {
	ns := c.lastPoll.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (c *Client) polled() { c.lastPoll.Store(time.Now().UnixNano()) }

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
