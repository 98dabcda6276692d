package telegramtest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	tgbot "github.com/go-telegram/bot"
)

// The fake answers a call that breaks a limit with a 429 whose
// retry_after is the wait, rounded up, and refuses the chat's calls until
// then; other chats and uncounted methods go on.
func TestLimits(t *testing.T) {
	type call struct {
		after  time.Duration // since the previous call
		chat   int64
		method string // "send" or "typing"
		retry  int    // the 429's retry_after; 0: accepted
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"one a second in a chat", []call{
			{0, 5, "send", 0}, {999 * time.Millisecond, 5, "send", 1}, {999 * time.Millisecond, 5, "send", 1},
			{time.Millisecond, 5, "send", 0},
		}},
		{"refused until retry_after", []call{
			{0, 5, "send", 0}, {100 * time.Millisecond, 5, "send", 1}, {950 * time.Millisecond, 5, "send", 1},
			{50 * time.Millisecond, 5, "send", 0}, {1500 * time.Millisecond, 5, "send", 0},
		}},
		{"other chats go on", []call{
			{0, 5, "send", 0}, {0, 6, "send", 0}, {0, 5, "send", 1}, {0, 7, "send", 0},
		}},
		{"typing is not counted", []call{
			{0, 5, "send", 0}, {0, 5, "typing", 0}, {0, 5, "typing", 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := NewInProcess(t)
				b := bubbleClient(t, f)
				for i, c := range tt.calls {
					time.Sleep(c.after)
					var err error
					if c.method == "typing" {
						_, err = b.SendChatAction(context.Background(), &tgbot.SendChatActionParams{ChatID: c.chat, Action: "typing"})
					} else {
						_, err = b.SendMessage(context.Background(), &tgbot.SendMessageParams{ChatID: c.chat, Text: "hi"})
					}
					var tooMany *tgbot.TooManyRequestsError
					switch {
					case c.retry == 0 && err != nil:
						t.Errorf("call %d: %v, want accepted", i, err)
					case c.retry != 0 && (!errors.As(err, &tooMany) || tooMany.RetryAfter != c.retry):
						t.Errorf("call %d: %v, want a 429 with retry_after %d", i, err, c.retry)
					}
				}
			})
		})
	}
}

func TestGroupAndGlobalLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewInProcess(t)
		f.SetLimits(Limits{GroupPerMinute: 20})
		b := bubbleClient(t, f)
		ctx := context.Background()
		for i := range 20 {
			if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: -42, Text: "hi"}); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			time.Sleep(time.Second)
		}
		// 20 in the last 20 s: the 21st waits until the first is a minute old.
		_, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: -42, Text: "hi"})
		var tooMany *tgbot.TooManyRequestsError
		if !errors.As(err, &tooMany) || tooMany.RetryAfter != 40 {
			t.Fatalf("21st message in a minute: %v, want retry_after 40", err)
		}
		if f.TooMany(-42) != 1 || f.TooMany(0) != 1 {
			t.Errorf("TooMany = %d, %d", f.TooMany(-42), f.TooMany(0))
		}

		f.SetLimits(Limits{PerSecond: 30})
		time.Sleep(time.Minute)
		for i := range 30 {
			if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: int64(100 + i), Text: "hi"}); err != nil {
				t.Fatalf("chat %d: %v", i, err)
			}
		}
		if _, err := b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: 500, Text: "hi"}); !errors.As(err, &tooMany) {
			t.Fatalf("31st message in a second: %v, want a 429", err)
		}
		if chats, most := f.TooManyChats(); chats != 2 || most != 1 {
			t.Errorf("TooManyChats = %d, %d", chats, most)
		}
	})
}

// bubbleClient is a go-telegram/bot client of an in-process fake.
func bubbleClient(t *testing.T, f *Fake) *tgbot.Bot {
	t.Helper()
	b, err := tgbot.New(f.Token(), tgbot.WithSkipGetMe(), tgbot.WithServerURL(f.URL()),
		tgbot.WithHTTPClient(5*time.Second, f.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
