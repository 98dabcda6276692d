package telegram

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

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

const (
	alice = 1001
	bob   = 1002
	group = int64(-1001234567890)
)

// newBubbleClient is a Client against an in-process fake Bot API, for a
// test inside a testing/synctest bubble; retries do not wait.
func newBubbleClient(t *testing.T) (*Client, *telegramtest.Fake) {
	t.Helper()
	fake := telegramtest.NewInProcess(t)
	c, err := New(Options{Token: fake.Token(), APIURL: fake.URL(), HTTPClient: fake.Client(),
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, fake
}

// sendText sends text to chat as one paced sendMessage.
func sendText(ctx context.Context, c *Client, chatID int64, text string) error {
	_, err := Send(ctx, c, chatID, "sendMessage", Paced, func(ctx context.Context) (*models.Message, error) {
		return c.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: chatID, Text: text})
	})
	return err
}

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
		c, fake := newBubbleClient(t)
		t0 := time.Now()
		fake.FailNext("sendMessage", http.StatusTooManyRequests, "", 2)
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := sendText(context.Background(), c, alice, "the answer"); err != nil {
				t.Error(err)
			}
		})
		synctest.Wait() // refused: the chat is held
		wg.Go(func() {
			if err := sendText(context.Background(), c, alice, "the next message"); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			_ = c.DoOnce(context.Background(), alice, "sendChatAction", Unpaced, func(ctx context.Context) error {
				_, err := c.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: alice, Action: models.ChatActionTyping})
				return err
			})
		})
		synctest.Wait()
		if err := sendText(context.Background(), c, bob, "another chat"); err != nil {
			t.Fatal(err)
		}
		if got := requestTimes(fake, bob, t0, "sendMessage"); !slices.Equal(got, []time.Duration{0}) {
			t.Errorf("another chat's message at %v, want at once", got)
		}
		if got := requestTimes(fake, alice, t0, "sendMessage", "sendChatAction"); len(got) != 1 {
			t.Fatalf("requests to the held chat at %v, want only the refused one", got)
		}
		wg.Wait()
		if got, want := requestTimes(fake, alice, t0, "sendMessage"), []time.Duration{0, 2 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("messages at %v, want %v (the retry after retry_after, the next a second later)", got, want)
		}
		if got := requestTimes(fake, alice, t0, "sendChatAction"); !slices.Equal(got, []time.Duration{2 * time.Second}) {
			t.Errorf("typing at %v, want when the hold ended", got)
		}
		if texts := fake.Texts(alice); !slices.Equal(texts, []string{"the answer", "the next message"}) {
			t.Errorf("texts %q", texts)
		}
		if s := c.Stats(); s.TooMany != 1 {
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
				c, fake := newBubbleClient(t)
				t0 := time.Now()
				var wg sync.WaitGroup
				for _, chat := range tt.chats {
					wg.Go(func() {
						for range tt.each {
							if err := sendText(context.Background(), c, chat, "hello"); err != nil {
								t.Error(err)
							}
						}
					})
				}
				wg.Wait()
				if n := fake.TooMany(0); n != 0 {
					t.Errorf("%d 429s from the fake", n)
				}
				tt.check(t, fake, t0)
			})
		})
	}
}

// A queued update of a live message is replaced by a newer one: the
// newest runs, once, and every caller gets its outcome.
func TestCoalescedUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newBubbleClient(t)
		out := c
		ctx := context.Background()
		if err := sendText(ctx, c, alice, "first"); err != nil { // the next paced call waits a second
			t.Fatal(err)
		}
		var ran []string
		var mu sync.Mutex
		update := func(text string) <-chan error {
			return out.Submit(ctx, alice, "editMessageText", Paced, "progress", func(context.Context) error {
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
		c, fake := newBubbleClient(t)
		t0 := time.Now()
		ctx := context.Background()
		if err := sendText(ctx, c, alice, "one"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { _ = sendText(ctx, c, alice, "two") })
		synctest.Wait()
		wg.Go(func() {
			_ = c.DoOnce(ctx, alice, "sendChatAction", Unpaced, func(ctx context.Context) error {
				_, err := c.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: alice, Action: models.ChatActionTyping})
				return err
			})
		})
		wg.Wait()
		if got := requestTimes(fake, alice, t0, "sendChatAction"); !slices.Equal(got, []time.Duration{0}) {
			t.Errorf("typing at %v, want at once", got)
		}
		if got := requestTimes(fake, alice, t0, "sendMessage"); !slices.Equal(got, []time.Duration{0, time.Second}) {
			t.Errorf("messages at %v", got)
		}
	})
}

// A call whose context ends while it waits is dropped, not made later.
func TestQueuedCallDroppedWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fake := newBubbleClient(t)
		fake.FailNext("sendMessage", http.StatusTooManyRequests, "", 5)
		go func() { _ = sendText(context.Background(), c, alice, "held") }()
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- sendText(ctx, c, alice, "given up") }()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want cancelled", err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if texts := fake.Texts(alice); !slices.Equal(texts, []string{"held"}) {
			t.Errorf("texts %q", texts)
		}
	})
}
