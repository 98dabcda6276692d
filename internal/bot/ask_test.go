package bot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// A press of a question's button, and what the bot must answer it with.
type press struct {
	chat, user int64
	label      string // a button of the question's message
	data       string // instead: raw callback data (forged)
	otherMsg   bool   // on another message than the question's
	answer     string
	alert      bool
}

func TestAsk(t *testing.T) {
	yes := press{chat: alice, user: alice, label: "Yes", answer: "Yes"}
	tests := []struct {
		name    string
		chat    int64
		may     func(int64) bool
		timeout time.Duration
		presses []press
		cancel  bool // ctx ends after the presses
		choice  string
		err     error
		outcome string
	}{
		{name: "answered", chat: alice, presses: []press{yes}, choice: "yes", outcome: "→ Yes (User 1001)"},
		{name: "forged data changes nothing", chat: alice, presses: []press{
			{chat: alice, user: alice, data: "q:AAAAAAAAAAAAAAAAAAAAAAAAAA:0", answer: expiredPress},
			{chat: alice, user: alice, data: "approve", answer: expiredPress},
			{chat: alice, user: alice, label: "Yes", otherMsg: true, answer: expiredPress},
			yes,
		}, choice: "yes", outcome: "→ Yes (User 1001)"},
		{name: "another chat's press changes nothing", chat: alice, presses: []press{
			{chat: bob, user: bob, label: "No", answer: expiredPress},
			{chat: alice, user: alice, label: "No", answer: "No"},
		}, choice: "no", outcome: "→ No (User 1001)"},
		{name: "strangers get an alert", chat: group, presses: []press{
			{chat: group, user: stranger, label: "Yes", answer: strangerPress, alert: true},
			{chat: group, user: bob, label: "Yes", answer: "Yes"},
		}, choice: "yes", outcome: "→ Yes (User 1002)"},
		{name: "only whom it is for", chat: group, may: func(u int64) bool { return u == alice }, presses: []press{
			{chat: group, user: bob, label: "No", answer: DefaultRefusal, alert: true},
			{chat: group, user: alice, label: "No", answer: "No"},
		}, choice: "no", outcome: "→ No (User 1001)"},
		{name: "timeout", chat: alice, timeout: 5 * time.Minute, err: ErrNoAnswer, outcome: "→ No answer in time."},
		{name: "cancelled", chat: alice, cancel: true, err: context.Canceled, outcome: "→ Cancelled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type result struct {
					a   Answer
					err error
				}
				done := make(chan result, 1)
				go func() {
					a, err := h.bot.Chat().Ask(ctx, chat.In(tt.chat), Question{Text: "Go on?", MayAnswer: tt.may, Timeout: tt.timeout,
						Buttons: [][]Button{{{Label: "Yes", Choice: "yes"}, {Label: "No", Choice: "no"}}}})
					done <- result{a, err}
				}()
				msgs, err := h.fake.WaitSent(tt.chat, 1, waitLong)
				if err != nil {
					t.Fatal(err)
				}
				q := msgs[0]
				if q.Text != "Go on?" || len(q.Keyboard) != 1 || len(q.Keyboard[0]) != 2 {
					t.Fatalf("question %+v", q)
				}
				h.pressAll(t, tt.presses, q)
				if tt.cancel {
					synctest.Wait()
					cancel()
				}
				r := <-done
				if r.a.Choice != tt.choice || !errors.Is(r.err, tt.err) {
					t.Errorf("Ask = %+v, %v; want %q, %v", r.a, r.err, tt.choice, tt.err)
				}
				// The closing edit is queued behind the chat's pace.
				time.Sleep(telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				final := h.fake.Sent(tt.chat)[0]
				if final.Keyboard != nil || final.Text != "Go on?\n\n"+tt.outcome {
					t.Errorf("closed question %q with keyboard %v, want the outcome %q and no buttons", final.Text, final.Keyboard, tt.outcome)
				}
				// Once closed, a press of its buttons has expired and changes nothing.
				edits := final.Edits()
				id := h.fake.Callback(tt.chat, alice, q.ID, q.Keyboard[0][0].Data)
				if a, err := h.fake.WaitAnswer(id, waitLong); err != nil || a.Text != expiredPress {
					t.Errorf("a press after the question closed: %+v, %v", a, err)
				}
				synctest.Wait()
				if h.fake.Sent(tt.chat)[0].Edits() != edits {
					t.Error("a late press changed the message")
				}
			})
		})
	}
}

// pressAll presses each of presses on q in turn and checks how each was
// answered.
func (h *harness) pressAll(t *testing.T, presses []press, q telegramtest.Message) {
	t.Helper()
	for _, p := range presses {
		a, err := h.fake.WaitAnswer(h.pressAs(t, p, q), waitLong)
		if err != nil {
			t.Fatal(err)
		}
		if a.Text != p.answer || a.ShowAlert != p.alert {
			t.Errorf("press %+v answered %+v, want %q alert=%v", p, a, p.answer, p.alert)
		}
	}
}

// pressAs queues p on the question q and returns the callback id.
func (h *harness) pressAs(t *testing.T, p press, q telegramtest.Message) string {
	t.Helper()
	data := p.data
	if p.label != "" {
		for _, row := range q.Keyboard {
			for _, b := range row {
				if b.Text == p.label {
					data = b.Data
				}
			}
		}
	}
	msgID := q.ID
	if p.otherMsg {
		msgID++
	}
	return h.fake.Callback(p.chat, p.user, msgID, data)
}

func TestAskRefusesBadQuestions(t *testing.T) {
	h := newBot(t, nil)
	for _, q := range []Question{
		{Text: "", Buttons: [][]Button{{{Label: "a"}}}},
		{Text: "no buttons"},
		{Text: "blank label", Buttons: [][]Button{{{Label: " "}}}},
		{Text: strings.Repeat("x", 4000), Buttons: [][]Button{{{Label: "a"}}}},
	} {
		if _, err := h.bot.Chat().Ask(context.Background(), chat.In(alice), q); err == nil {
			t.Errorf("Ask(%.20q) did not fail", q.Text)
		}
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}
