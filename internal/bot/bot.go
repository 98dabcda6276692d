package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/pairing"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// Options configure a Bot. Zero values take the defaults.
type Options struct {
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
	// Telegram is the Bot API client the bot receives updates from and
	// makes every call with (internal/telegram); required.
	Telegram *telegram.Client
	// Chat is the sessions' chat port on Telegram, built before them
	// (NewChat); nil: New builds one, with Admins, NoDrafts and Speaker.
	Chat *Chat
	// Sessions receives messages and commands; required.
	Sessions Sessions
	// Usage answers /usage and /allow_more; nil: usage is not recorded.
	Usage  Usage
	Logger *slog.Logger
	// AlbumWait is how long the parts of an album (photos sent together)
	// are collected after the last one arrived; DefaultAlbumWait when 0.
	AlbumWait time.Duration
	// NoDrafts and Speaker are ChatOptions' of the Chat New builds.
	NoDrafts bool
	Speaker  Speaker
	// Voice is how voice notes are heard (voice.go).
	Voice VoiceOptions
	// Jobs answers /jobs and its buttons; nil: scheduled tasks are off.
	Jobs Jobs
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
	logins logins // /mcp login waiting for the admin's pasted address

	sessions Sessions
	me       models.User // set by Run before polling starts
	started  atomic.Bool
}

// New returns a Bot. It does no network I/O: Run calls getMe.
func New(o Options) (*Bot, error) {
	if o.Telegram == nil {
		return nil, errors.New("bot: no Telegram client")
	}
	if o.Sessions == nil {
		return nil, errors.New("bot: no Sessions")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "bot")
	b := &Bot{
		o:        o,
		log:      logger,
		scrub:    o.Telegram.Scrub,
		tg:       o.Telegram,
		access:   newAccess(o.AllowedUsers, o.Admins),
		sessions: o.Sessions,
	}
	if o.AlbumWait <= 0 {
		o.AlbumWait = DefaultAlbumWait
	}
	b.albums = newAlbums(o.AlbumWait, b.flushAlbum)
	b.chat = o.Chat
	if b.chat == nil {
		b.chat = NewChat(ChatOptions{Telegram: o.Telegram, Admins: o.Admins, NoDrafts: o.NoDrafts, Speaker: o.Speaker, Logger: o.Logger})
	}
	b.access.added, b.access.log, b.access.scrub = o.Pairing, logger, b.scrub
	end := b.sessions.End
	b.chat.topics.end.Store(&end)
	return b, nil
}

// Chat is the session's chat port, usable before Run.
func (b *Bot) Chat() *Chat { return b.chat }

// Run learns the bot's name (getMe), publishes the commands and receives
// updates until ctx ends — by long polling (after removing any webhook) or,
// with a WebhookURL, by registering the webhook — then waits for the
// chats' workers. It returns nil on a clean shutdown, and an error when
// Telegram refuses the token or the bot cannot start.
func (b *Bot) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	b.disp = newDispatcher(ctx, b.runJob)
	defer b.disp.wait()
	if err := b.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	b.tg.Serve(ctx)
	b.disp.wait()
	b.log.Info("stopped receiving updates")
	return nil
}

func (b *Bot) start(ctx context.Context) error {
	me, err := b.tg.Connect(ctx)
	if err != nil {
		return err
	}
	b.me = me
	b.chat.setUsername(me.Username)
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
	if kept := b.tg.Kept(); len(kept) > 0 {
		b.log.Info("handling the messages the last run had not answered", "updates", len(kept))
		for i := range kept {
			b.dispatch(&kept[i].Update, kept[i].Key, true)
		}
	}
	if err := b.tg.Listen(ctx, b.onUpdate); err != nil {
		return err
	}
	if _, err := telegram.Call(ctx, b.tg, "setMyCommands", func(ctx context.Context) (bool, error) {
		return b.tg.API().SetMyCommands(ctx, &tgbot.SetMyCommandsParams{Commands: botCommands()})
	}); err != nil {
		b.log.Warn("could not publish the command list", "err", err.Error())
	}
	return nil
}

// onUpdate runs on the poller (or in the webhook's request): it only
// queues the update on its chat's worker.
func (b *Bot) onUpdate(u *models.Update, key int64) {
	b.recovered(u, func() { b.dispatch(u, key, false) })
}

// recovered runs fn, which handles u on the poller, and keeps the poller
// alive if it panics (go-telegram/bot would let the panic kill the
// process): the panic is logged, and the chat answered from its worker,
// so the poller does not wait.
func (b *Bot) recovered(u *models.Update, fn func()) {
	var place chat.Place
	if u != nil && u.Message != nil {
		place = placeOf(u.Message)
	}
	if b.safely(place, fn) && place.Chat != 0 && b.disp != nil {
		b.disp.submit(place, func(ctx context.Context) { b.reply(ctx, place, panicReply) })
	}
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
		b.tg.Done(key)
		return
	}
	if m == nil {
		b.tg.Done(key)
		return
	}
	job := func(ctx context.Context) {
		kept := false
		defer func() { // a panic too: the chat is answered, and the update done
			if !kept {
				b.tg.Done(key)
			}
		}()
		kept = b.handleMessage(ctx, m, []int64{key}, replayed)
	}
	submit := b.disp.submit
	if replayed {
		submit = b.disp.submitKept // accepted under the cap once already
	}
	ok := submit(placeOf(m), job)
	switch {
	case ok:
	case b.disp.closing():
		// Stopping: the inbox keeps it for the next start.
	default:
		b.log.Warn("chat queue full: update dropped", "chat", placeOf(m), "update", u.ID)
		b.tg.Done(key)
	}
}
