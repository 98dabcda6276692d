package bot

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// fakeLive is a hand-off the test ends or relinks.
type fakeLive struct {
	mu      sync.Mutex
	url     string
	relinks int
	once    sync.Once
	done    chan struct{}
	outcome session.HandoffOutcome
}

func newFakeLive() *fakeLive {
	return &fakeLive{url: "https://bot.test/live/t/first", done: make(chan struct{})}
}

func (l *fakeLive) URL() string { l.mu.Lock(); defer l.mu.Unlock(); return l.url }
func (l *fakeLive) Relink() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.relinks++
	l.url = "https://bot.test/live/t/new"
	return l.url
}
func (l *fakeLive) Done() <-chan struct{}           { return l.done }
func (l *fakeLive) Outcome() session.HandoffOutcome { return l.outcome }
func (l *fakeLive) End(o session.HandoffOutcome) {
	l.once.Do(func() { l.outcome = o; close(l.done) })
}

// linkOf is the message's button that opens the live view.
func linkOf(m telegramtest.Message) telegramtest.Button {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.URL != "" {
				return b
			}
		}
	}
	return telegramtest.Button{}
}

// The hand-off's message in a private chat: the reason, a Mini App button,
// Done and New link; it ends with Done (here or in the view), the timeout
// or the turn's end, and says which. (A group's: handoff_group_test.go.)
func TestShowHandoff(t *testing.T) {
	tests := []struct {
		name    string
		place   chat.Place
		presses []press
		relink  bool // New link pressed first
		ends    session.HandoffOutcome
		cancel  bool
		want    session.HandoffOutcome
		outcome string
	}{
		{name: "Done in the chat", place: chat.In(alice), presses: []press{{chat: alice, user: alice, label: "✅ Done", answer: "✅ Done"}},
			want: session.HandoffDone, outcome: "✅ Done: I take it from here."},
		{name: "a new link, then Done in the view", place: chat.In(alice), relink: true, ends: session.HandoffDone,
			want: session.HandoffDone, outcome: "✅ Done: I take it from here."},
		{name: "nobody in time", place: chat.In(alice), want: session.HandoffTimeout, outcome: "⌛ Nobody pressed Done within 5 minutes."},
		{name: "the turn ends", place: chat.In(alice), cancel: true, want: session.HandoffStopped, outcome: "⏹ Stopped."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, func(o *testOptions) { o.Admins = []int64{admin} })
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				live := newFakeLive()
				p := session.HandoffPrompt{UserID: alice, Reason: "Solve the <CAPTCHA>", Timeout: 5 * time.Minute, Live: live}
				done := make(chan session.HandoffOutcome, 1)
				go func() {
					o, err := h.bot.Chat().ShowHandoff(ctx, tt.place, p)
					if err != nil {
						t.Error(err)
					}
					done <- o
				}()
				msgs, err := h.fake.WaitSent(tt.place.Chat, 1, waitLong)
				if err != nil {
					t.Fatal(err)
				}
				m := msgs[0]
				if b := linkOf(m); b.URL != "https://bot.test/live/t/first" || !b.WebApp || !strings.Contains(m.Text, "Solve the &lt;CAPTCHA&gt;") {
					t.Fatalf("message %q, link %+v (want a Mini App)", m.Text, b)
				}
				if tt.relink {
					h.pressAll(t, []press{{chat: alice, user: alice, label: "🔄 New link", answer: "🔄 New link"}}, m)
					h.fake.WaitUntil(func() bool { return linkOf(h.fake.Sent(alice)[0]).URL == "https://bot.test/live/t/new" }, waitLong)
					if b := linkOf(h.fake.Sent(alice)[0]); b.URL != "https://bot.test/live/t/new" || !b.WebApp {
						t.Fatalf("after New link the button is %+v", b)
					}
				}
				h.pressAll(t, tt.presses, m)
				if tt.ends != 0 {
					live.End(tt.ends)
				}
				if tt.cancel {
					synctest.Wait()
					cancel()
				}
				if o := <-done; o != tt.want || live.Outcome() != tt.want {
					t.Errorf("ShowHandoff = %v, the hand-off ended %v; want %v", o, live.Outcome(), tt.want)
				}
				time.Sleep(telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				final := h.fake.Sent(tt.place.Chat)[0]
				if final.Keyboard != nil || !strings.HasSuffix(final.Text, "\n\n<i>"+tt.outcome+"</i>") {
					t.Errorf("closed message %q; want it to end with %q, without buttons", final.Text, tt.outcome)
				}
			})
		})
	}
}

var _ session.HandoffChat = (*Chat)(nil)
