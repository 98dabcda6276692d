package bot

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// requestTimes are the times of chat's requests of the given methods,
// relative to t0.
func requestTimes(f *telegramtest.Fake, chat int64, t0 time.Time, methods ...string) []time.Duration {
	var out []time.Duration
	for _, r := range f.Requests() {
		if r.ChatID() == chat && slices.Contains(methods, r.Method) {
			out = append(out, r.Time.Sub(t0))
		}
	}
	return out
}

// The case: a 429 with retry_after 2 for a chat held only that
// request, and the chat's next message went out at once. Now it holds
// every call of the chat, and no other chat.
func TestTooManyHoldsTheChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		c := h.bot.Chat()
		t0 := time.Now()
		h.fake.FailNext("sendMessage", http.StatusTooManyRequests, "", 2)
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := c.SendText(context.Background(), alice, "the answer"); err != nil {
				t.Error(err)
			}
		})
		synctest.Wait() // refused: the chat is held
		wg.Go(func() {
			if err := c.SendText(context.Background(), alice, "the next message"); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			_ = c.tg.DoOnce(context.Background(), alice, "sendChatAction", telegram.Unpaced, func(ctx context.Context) error {
				_, err := c.tg.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: alice, Action: models.ChatActionTyping})
				return err
			})
		})
		synctest.Wait()
		if err := c.SendText(context.Background(), bob, "another chat"); err != nil {
			t.Fatal(err)
		}
		if got := requestTimes(h.fake, bob, t0, "sendMessage"); !slices.Equal(got, []time.Duration{0}) {
			t.Errorf("another chat's message at %v, want at once", got)
		}
		if got := requestTimes(h.fake, alice, t0, "sendMessage", "sendChatAction"); len(got) != 1 {
			t.Fatalf("requests to the held chat at %v, want only the refused one", got)
		}
		wg.Wait()
		if got, want := requestTimes(h.fake, alice, t0, "sendMessage"), []time.Duration{0, 2 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("messages at %v, want %v (the retry after retry_after, the next a second later)", got, want)
		}
		if got := requestTimes(h.fake, alice, t0, "sendChatAction"); !slices.Equal(got, []time.Duration{2 * time.Second}) {
			t.Errorf("typing at %v, want when the hold ended", got)
		}
		if texts := h.fake.Texts(alice); !slices.Equal(texts, []string{"the answer", "the next message"}) {
			t.Errorf("texts %q", texts)
		}
		if s := h.tg.Stats(); s.TooMany != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}

// Paced calls stay under the documented limits of the fake, which
// enforces them: not one 429.
func TestPacedUnderTheLimits(t *testing.T) {
	tests := []struct {
		name  string
		chats []int64 // one goroutine each
		each  int     // messages per chat
		check func(t *testing.T, f *telegramtest.Fake, t0 time.Time)
	}{
		{"one a second in a chat", []int64{alice}, 5, func(t *testing.T, f *telegramtest.Fake, t0 time.Time) {
			want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
			if got := requestTimes(f, alice, t0, "sendMessage"); !slices.Equal(got, want) {
				t.Errorf("messages at %v, want %v", got, want)
			}
		}},
		{"twenty a minute in a group", []int64{group}, 25, func(t *testing.T, f *telegramtest.Fake, t0 time.Time) {
			got := requestTimes(f, group, t0, "sendMessage")
			if len(got) != 25 || got[19] != 19*time.Second || got[20] != time.Minute {
				t.Errorf("messages at %v, want the 21st a minute after the first", got)
			}
		}},
		{"thirty a second in all", func() []int64 {
			var ids []int64
			for i := range 45 {
				ids = append(ids, int64(2000+i))
			}
			return ids
		}(), 1, func(t *testing.T, f *telegramtest.Fake, t0 time.Time) {
			var at []time.Duration
			for _, r := range f.RequestsFor("sendMessage") {
				at = append(at, r.Time.Sub(t0))
			}
			slices.Sort(at)
			if len(at) != 45 || at[29] != 0 || at[30] != time.Second {
				t.Errorf("messages at %v, want 30 at once and 15 a second later", at)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newBubbleBot(t, nil)
				t0 := time.Now()
				var wg sync.WaitGroup
				for _, chat := range tt.chats {
					wg.Go(func() {
						for range tt.each {
							if err := h.bot.Chat().SendText(context.Background(), chat, "hello"); err != nil {
								t.Error(err)
							}
						}
					})
				}
				wg.Wait()
				if n := h.fake.TooMany(0); n != 0 {
					t.Errorf("%d 429s from the fake", n)
				}
				tt.check(t, h.fake, t0)
			})
		})
	}
}

// A queued update of a live message is replaced by a newer one: the
// newest runs, once, and every caller gets its outcome.
func TestCoalescedUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		out := h.bot.Chat().tg
		ctx := context.Background()
		if err := h.bot.Chat().SendText(ctx, alice, "first"); err != nil { // the next paced call waits a second
			t.Fatal(err)
		}
		var ran []string
		var mu sync.Mutex
		update := func(text string) <-chan error {
			return out.Submit(ctx, alice, "editMessageText", telegram.Paced, "progress", func(context.Context) error {
				mu.Lock()
				ran = append(ran, text)
				mu.Unlock()
				return nil
			})
		}
		dones := []<-chan error{update("a"), update("b"), update("c")}
		for _, d := range dones {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if !slices.Equal(ran, []string{"c"}) {
			t.Errorf("ran %q, want only the newest", ran)
		}
		if s := out.Stats(); s.Coalesced != 2 {
			t.Errorf("coalesced %d, want 2", s.Coalesced)
		}
	})
}

// An unpaced call (typing, an answer to a button) does not wait behind a
// paced one waiting for its second; paced calls keep their order.
func TestUnpacedGoesAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		c := h.bot.Chat()
		t0 := time.Now()
		ctx := context.Background()
		if err := c.SendText(ctx, alice, "one"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.SendText(ctx, alice, "two") })
		synctest.Wait()
		wg.Go(func() {
			_ = c.tg.DoOnce(ctx, alice, "sendChatAction", telegram.Unpaced, func(ctx context.Context) error {
				_, err := c.tg.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: alice, Action: models.ChatActionTyping})
				return err
			})
		})
		wg.Wait()
		if got := requestTimes(h.fake, alice, t0, "sendChatAction"); !slices.Equal(got, []time.Duration{0}) {
			t.Errorf("typing at %v, want at once", got)
		}
		if got := requestTimes(h.fake, alice, t0, "sendMessage"); !slices.Equal(got, []time.Duration{0, time.Second}) {
			t.Errorf("messages at %v", got)
		}
	})
}

// A call whose context ends while it waits is dropped, not made later.
func TestQueuedCallDroppedWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		c := h.bot.Chat()
		h.fake.FailNext("sendMessage", http.StatusTooManyRequests, "", 5)
		go func() { _ = c.SendText(context.Background(), alice, "held") }()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- c.SendText(ctx, alice, "given up") }()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want cancelled", err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if texts := h.fake.Texts(alice); !slices.Equal(texts, []string{"held"}) {
			t.Errorf("texts %q", texts)
		}
	})
}
