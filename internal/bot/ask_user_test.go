package bot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// The model's question: answered by a press or, when allowed, by a typed
// message (which reaches no session); in a group only by the turn's user
// or an admin; ended by the timeout and by the turn's end.
func TestAskUser(t *testing.T) {
	q := func(chat int64, allowText bool) session.UserQuestion {
		return session.UserQuestion{UserID: alice, Question: "Which <size>?", Options: []string{"Small", "Large"},
			AllowText: allowText, Timeout: 5 * time.Minute}
	}
	tests := []struct {
		name     string
		chat     int64
		text     bool
		presses  []press
		typed    [][2]any // user, text
		cancel   bool
		want     session.UserAnswer
		err      error
		outcome  string
		sessions int // messages the session got
	}{
		{name: "pressed", chat: alice, presses: []press{{chat: alice, user: alice, label: "Large", answer: "Large"}},
			want: session.UserAnswer{Choice: "Large", By: "User 1001"}, outcome: "→ Large (User 1001)"},
		{name: "typed", chat: alice, text: true, typed: [][2]any{{int64(alice), "medium, please"}},
			want: session.UserAnswer{Text: "medium, please", By: "User 1001"}, outcome: "→ User 1001 wrote an answer."},
		{name: "typed, not allowed: a new message", chat: alice, typed: [][2]any{{int64(alice), "medium"}},
			presses: []press{{chat: alice, user: alice, label: "Small", answer: "Small"}},
			want:    session.UserAnswer{Choice: "Small", By: "User 1001"}, outcome: "→ Small (User 1001)", sessions: 1},
		{name: "nobody answers", chat: alice, err: session.ErrNoUserAnswer, outcome: "→ No answer in time."},
		{name: "the turn ends", chat: alice, cancel: true, err: context.Canceled, outcome: "→ Cancelled."},
		{name: "group: others refused, the starter answers", chat: group, text: true, typed: [][2]any{{int64(bob), "@volcanic_test_bot tiny"}},
			presses: []press{
				{chat: group, user: stranger, label: "Small", answer: strangerPress, alert: true},
				{chat: group, user: bob, label: "Small", answer: askRefusal, alert: true},
				{chat: group, user: admin, label: "Small", answer: "Small"},
			}, want: session.UserAnswer{Choice: "Small", By: "User 1003"}, outcome: "→ Small (User 1003)", sessions: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, func(o *testOptions) { o.Admins = []int64{admin} })
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type result struct {
					a   session.UserAnswer
					err error
				}
				done := make(chan result, 1)
				go func() {
					a, err := h.bot.Chat().AskUser(ctx, chat.In(tt.chat), q(tt.chat, tt.text))
					done <- result{a, err}
				}()
				msgs, err := h.fake.WaitSent(tt.chat, 1, waitLong)
				if err != nil {
					t.Fatal(err)
				}
				m := msgs[0]
				if len(m.Keyboard) != 2 || !strings.Contains(m.Text, "Which &lt;size&gt;?") {
					t.Fatalf("question %q, keyboard %+v", m.Text, m.Keyboard)
				}
				for _, ty := range tt.typed {
					h.fake.Message(tt.chat, ty[0].(int64), ty[1].(string))
					synctest.Wait()
				}
				h.pressAll(t, tt.presses, m)
				if tt.cancel {
					synctest.Wait()
					cancel()
				}
				r := <-done
				if r.a != tt.want || !errors.Is(r.err, tt.err) || (tt.err == nil) != (r.err == nil) {
					t.Errorf("AskUser = %+v, %v; want %+v, %v", r.a, r.err, tt.want, tt.err)
				}
				time.Sleep(telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				final := h.fake.Sent(tt.chat)[0]
				if final.Keyboard != nil || !strings.HasSuffix(final.Text, "\n\n<i>"+tt.outcome+"</i>") {
					t.Errorf("closed question %q; want it to end with %q, without buttons", final.Text, tt.outcome)
				}
				if n := len(h.sess.Calls()); n != tt.sessions {
					t.Errorf("the session got %d messages (%q), want %d", n, h.sess.Calls(), tt.sessions)
				}
			})
		})
	}
}
