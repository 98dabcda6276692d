package bot

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

var _ session.Elicitor = (*Chat)(nil)

func intp(n int) *int           { return &n }
func floatp(n float64) *float64 { return &n }

// signupForm is a server's form of every kind of field the bot renders.
func signupForm() chat.ElicitFormSpec {
	return chat.ElicitFormSpec{Fields: []chat.ElicitField{
		{Name: "name", Title: "Your name", Description: "As on your <passport>.", Kind: chat.FieldString, Required: true, MinLength: intp(2)},
		{Name: "age", Kind: chat.FieldInteger, Minimum: floatp(0), Maximum: floatp(150), Default: int64(30)},
		{Name: "subscribe", Title: "Subscribe?", Kind: chat.FieldBoolean, Required: true},
		{Name: "color", Kind: chat.FieldChoice, Options: []chat.ElicitOption{{Value: "red", Label: "Red"}, {Value: "green", Label: "Green"}}},
		{Name: "tags", Kind: chat.FieldMultiChoice, MinItems: intp(1), Options: []chat.ElicitOption{{Value: "a", Label: "Alpha"}, {Value: "b", Label: "Beta"}, {Value: "c", Label: "Gamma"}}},
	}}
}

type elicitOutcome struct {
	res chat.ElicitResult
	err error
}

// elicitIn runs Chat.Elicit in chat for a turn alice started.
func (h *harness) elicitIn(ctx context.Context, chat int64, e chat.Elicitation) <-chan elicitOutcome {
	done := make(chan elicitOutcome, 1)
	go func() {
		res, err := h.bot.Chat().Elicit(ctx, inChat(chat), session.ElicitRequest{UserID: alice, Elicitation: e})
		done <- elicitOutcome{res, err}
	}()
	return done
}

// nth waits for the n-th message (1: the first) sent to chat.
func (h *harness) nth(t *testing.T, chat int64, n int) telegramtest.Message {
	t.Helper()
	msgs, err := h.fake.WaitSent(chat, n, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	return msgs[n-1]
}

// tap presses label on q as user and checks the toast.
func (h *harness) tap(t *testing.T, chat, user int64, q telegramtest.Message, label, answer string, alert bool) {
	t.Helper()
	id := h.pressAs(t, press{chat: chat, user: user, label: label}, q)
	a, err := h.fake.WaitAnswer(id, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != answer || a.ShowAlert != alert {
		t.Errorf("press of %q by %d answered %+v, want %q alert=%v", label, user, a, answer, alert)
	}
}

func hasButton(q telegramtest.Message, label string) bool {
	for _, row := range q.Keyboard {
		for _, b := range row {
			if b.Text == label {
				return true
			}
		}
	}
	return false
}

// A form filled in with typed and pressed answers: a bad answer asked
// again with its reason, a default taken, a boolean, a choice and a
// multiple choice with buttons; the typed answers reach the form, never
// the session.
func TestElicitForm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		done := h.elicitIn(context.Background(), alice, chat.Elicitation{Server: "shop", Mode: chat.ElicitForm,
			Message: "Sign up <now>", Form: signupForm()})

		intro := h.nth(t, alice, 1)
		if !strings.Contains(intro.Text, "<b>shop</b> asks:\nSign up &lt;now&gt;") || !strings.Contains(intro.Text, "5 questions follow") ||
			!strings.Contains(intro.Text, "not to the AI") || intro.Keyboard != nil {
			t.Errorf("intro %q", intro.Text)
		}
		name := h.nth(t, alice, 2)
		for _, want := range []string{"<b>Your name</b> (1 of 5, required)", "As on your &lt;passport&gt;.", "Type your answer. At least 2 characters."} {
			if !strings.Contains(name.Text, want) {
				t.Errorf("name question %q lacks %q", name.Text, want)
			}
		}
		if hasButton(name, skipLabel) || !hasButton(name, declineLabel) || !hasButton(name, cancelLabel) {
			t.Errorf("name buttons %+v: want Decline and Cancel, no Skip (required)", name.Keyboard)
		}
		h.fake.Message(alice, alice, "A")
		again := h.nth(t, alice, 3)
		if !strings.Contains(again.Text, "⚠️ It must be at least 2 characters long. Please answer again.") || !strings.Contains(again.Text, "Your name") {
			t.Errorf("asked again as %q", again.Text)
		}
		h.fake.Message(alice, alice, "Alice Liddell")
		age := h.nth(t, alice, 4)
		if !strings.Contains(age.Text, "age</b> (2 of 5, optional)") || !strings.Contains(age.Text, "Default: 30") ||
			!strings.Contains(age.Text, "a whole number from 0 to 150") {
			t.Errorf("age question %q", age.Text)
		}
		h.tap(t, alice, alice, age, "Use the default (30)", "Use the default (30)", false)
		sub := h.nth(t, alice, 5)
		h.tap(t, alice, alice, sub, yesLabel, yesLabel, false)
		color := h.nth(t, alice, 6)
		if !hasButton(color, "Red") || !hasButton(color, skipLabel) {
			t.Errorf("color buttons %+v", color.Keyboard)
		}
		h.tap(t, alice, alice, color, "Green", "Green", false)
		tags := h.nth(t, alice, 7)
		h.tap(t, alice, alice, tags, doneLabel, doneLabel, false) // none ticked: asked again
		tags = h.nth(t, alice, 8)
		if !strings.Contains(tags.Text, "Choose at least 1.") {
			t.Errorf("tags asked again as %q", tags.Text)
		}
		h.tap(t, alice, alice, tags, "☐ Gamma", "☐ Gamma", false)
		h.tap(t, alice, alice, tags, "☐ Alpha", "☐ Alpha", false)
		synctest.Wait()
		time.Sleep(telegram.DefaultLimits.ChatEvery)
		synctest.Wait()
		if cur := h.fake.Sent(alice)[7]; !hasButton(cur, "☑ Alpha") || !hasButton(cur, "☑ Gamma") || !hasButton(cur, "☐ Beta") {
			t.Errorf("ticks not shown: %+v", cur.Keyboard)
		}
		h.tap(t, alice, alice, tags, doneLabel, doneLabel, false)

		r := <-done
		want := map[string]any{"name": "Alice Liddell", "subscribe": true, "color": "green", "tags": []string{"a", "c"}}
		if r.err != nil || r.res.Action != chat.ElicitAccept || !reflect.DeepEqual(r.res.Content, want) {
			t.Errorf("Elicit = %+v, %v; want accept %v", r.res, r.err, want)
		}
		if calls := h.sess.callsWith("deliver"); len(calls) != 0 {
			t.Errorf("typed answers reached the session: %q", calls)
		}
		time.Sleep(telegram.DefaultLimits.ChatEvery * 10)
		synctest.Wait()
		sent := h.fake.Sent(alice)
		for i, wantEnd := range map[int]string{0: "✅ Answered: sent to shop.", 1: "⚠️ Not taken: It must be at least 2 characters long.",
			2: "→ Answered by User 1001.", 3: "→ The default (30), User 1001.", 4: "→ Yes (User 1001)", 5: "→ Green (User 1001)",
			7: "→ Alpha, Gamma (User 1001)"} {
			if m := sent[i]; m.Keyboard != nil || !strings.HasSuffix(m.Text, "<i>"+wantEnd+"</i>") {
				t.Errorf("message %d ends %q (keyboard %v), want %q", i+1, m.Text, m.Keyboard, wantEnd)
			}
		}
		if log := h.logs.String(); strings.Contains(log, "Alice Liddell") || strings.Contains(log, "answer=Green") || !strings.Contains(log, "button pressed") {
			t.Errorf("the log holds an answer (or no press at all):\n%s", log)
		}
		if strings.Contains(strings.Join(h.fake.Texts(alice), "\n"), "Alice Liddell") {
			t.Error("the bot repeated a typed answer")
		}
		// The form is over: its buttons have expired, and a typed message
		// goes to the session again.
		id := h.fake.Callback(alice, alice, sub.ID, sub.Keyboard[0][0].Data)
		if a, err := h.fake.WaitAnswer(id, waitLong); err != nil || a.Text != expiredPress {
			t.Errorf("a press after the form: %+v, %v", a, err)
		}
		h.fake.Message(alice, alice, "thanks")
		h.sess.waitCalls(t, "deliver", 1)
	})
}

func TestElicitEnds(t *testing.T) {
	form := chat.ElicitFormSpec{Fields: []chat.ElicitField{{Name: "city", Kind: chat.FieldString, Required: true}}}
	tests := []struct {
		name    string
		act     func(h *harness, q telegramtest.Message, cancel context.CancelFunc)
		timeout time.Duration
		action  chat.ElicitAction
		err     error
		line    string // how the question ends
		head    string // how the first message ends
	}{
		{name: "declined", act: func(h *harness, q telegramtest.Message, _ context.CancelFunc) {
			h.tap(t, alice, alice, q, declineLabel, declineLabel, false)
		}, action: chat.ElicitDecline, line: "❌ Declined by User 1001.", head: "❌ Declined by User 1001."},
		{name: "cancelled", act: func(h *harness, q telegramtest.Message, _ context.CancelFunc) {
			h.tap(t, alice, alice, q, cancelLabel, cancelLabel, false)
		}, action: chat.ElicitCancel, line: "Cancelled by User 1001.", head: "Cancelled by User 1001."},
		{name: "no answer in time", timeout: 2 * time.Minute, act: func(*harness, telegramtest.Message, context.CancelFunc) {},
			action: chat.ElicitCancel, err: context.DeadlineExceeded, line: "⌛ No answer in time: cancelled.", head: "⌛ No answer in time: cancelled."},
		{name: "the turn is stopped", act: func(_ *harness, _ telegramtest.Message, cancel context.CancelFunc) {
			synctest.Wait()
			cancel()
		}, action: chat.ElicitCancel, err: context.Canceled, line: "⏹ Stopped: cancelled.", head: "⏹ Stopped: cancelled."},
		{name: "forged presses change nothing", act: func(h *harness, q telegramtest.Message, _ context.CancelFunc) {
			for _, data := range []string{"decline", "q:AAAAAAAAAAAAAAAAAAAAAAAAAA:0", q.Keyboard[0][0].Data + "0"} {
				if a, _ := h.fake.WaitAnswer(h.fake.Callback(alice, alice, q.ID, data), waitLong); a.Text != expiredPress {
					t.Errorf("forged %q answered %+v", data, a)
				}
			}
			if a, _ := h.fake.WaitAnswer(h.fake.Callback(bob, bob, q.ID, q.Keyboard[0][0].Data), waitLong); a.Text != expiredPress {
				t.Errorf("a press from another chat answered %+v", a)
			}
			h.tap(t, alice, alice, q, cancelLabel, cancelLabel, false)
		}, action: chat.ElicitCancel, line: "Cancelled by User 1001.", head: "Cancelled by User 1001."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				done := h.elicitIn(ctx, alice, chat.Elicitation{Server: "weather", Mode: chat.ElicitForm, Message: "Where?", Form: form})
				q := h.nth(t, alice, 2)
				tt.act(h, q, cancel)
				r := <-done
				if r.res.Action != tt.action || !errors.Is(r.err, tt.err) || (tt.err == nil) != (r.err == nil) || r.res.Content != nil {
					t.Errorf("Elicit = %+v, %v; want %s, %v", r.res, r.err, tt.action, tt.err)
				}
				time.Sleep(3 * telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				sent := h.fake.Sent(alice)
				if len(sent) != 2 {
					t.Errorf("sent %q, want the intro and the question", h.fake.Texts(alice))
				}
				if !strings.HasSuffix(sent[1].Text, "<i>"+tt.line+"</i>") || sent[1].Keyboard != nil {
					t.Errorf("question ends %q", sent[1].Text)
				}
				if !strings.HasSuffix(sent[0].Text, "<i>"+tt.head+"</i>") {
					t.Errorf("intro ends %q", sent[0].Text)
				}
				id := h.fake.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data)
				if a, err := h.fake.WaitAnswer(id, waitLong); err != nil || a.Text != expiredPress {
					t.Errorf("a press after the end: %+v, %v", a, err)
				}
			})
		})
	}
}

// In a group the user who started the turn (or an admin) answers; the
// others' presses are refused and their messages go to the session.
func TestElicitGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, func(o *testOptions) { o.Admins = []int64{admin}; o.AllowedUsers = append(o.AllowedUsers, admin) })
		form := chat.ElicitFormSpec{Fields: []chat.ElicitField{
			{Name: "city", Kind: chat.FieldString, Required: true},
			{Name: "ok", Kind: chat.FieldBoolean, Required: true},
		}}
		done := h.elicitIn(context.Background(), group, chat.Elicitation{Server: "weather", Mode: chat.ElicitForm, Message: "Where?", Form: form})
		if intro := h.nth(t, group, 1); !strings.Contains(intro.Text, "reply to a question with your answer") {
			t.Errorf("intro %q", intro.Text)
		}
		city := h.nth(t, group, 2)
		if !strings.Contains(city.Text, "Reply to this message with your answer.") {
			t.Errorf("question %q", city.Text)
		}
		h.tap(t, group, bob, city, declineLabel, elicitRefusal, true)
		h.fake.Reply(group, bob, "Paris, says bob", city.ID)
		h.sess.waitCalls(t, "deliver", 1)
		h.fake.Reply(group, alice, "Lyon", city.ID)
		ok := h.nth(t, group, 3)
		h.tap(t, group, admin, ok, noLabel, noLabel, false)
		r := <-done
		if want := map[string]any{"city": "Lyon", "ok": false}; r.err != nil || r.res.Action != chat.ElicitAccept || !reflect.DeepEqual(r.res.Content, want) {
			t.Errorf("Elicit = %+v, %v; want accept %v", r.res, r.err, want)
		}
		if calls := h.sess.callsWith("deliver"); len(calls) != 1 || !strings.Contains(calls[0], "Paris, says bob") {
			t.Errorf("delivered %q, want bob's message alone", calls)
		}
	})
}

// A second form in the chat waits until the first is over.
func TestElicitOneFormAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		form := chat.ElicitFormSpec{Fields: []chat.ElicitField{{Name: "x", Kind: chat.FieldString, Required: true}}}
		first := h.elicitIn(context.Background(), alice, chat.Elicitation{Server: "one", Mode: chat.ElicitForm, Form: form})
		h.nth(t, alice, 2)
		second := h.elicitIn(context.Background(), alice, chat.Elicitation{Server: "two", Mode: chat.ElicitForm, Form: form})
		synctest.Wait()
		time.Sleep(3 * telegram.DefaultLimits.ChatEvery)
		synctest.Wait()
		if n := len(h.fake.Sent(alice)); n != 2 {
			t.Fatalf("sent %d messages while the first form was open: %q", n, h.fake.Texts(alice))
		}
		h.fake.Message(alice, alice, "first")
		if r := <-first; r.res.Content["x"] != "first" {
			t.Errorf("first form = %+v", r.res)
		}
		if intro := h.nth(t, alice, 3); !strings.Contains(intro.Text, "<b>two</b>") {
			t.Errorf("second form's intro %q", intro.Text)
		}
		h.nth(t, alice, 4)
		h.fake.Message(alice, alice, "second")
		if r := <-second; r.res.Content["x"] != "second" {
			t.Errorf("second form = %+v", r.res)
		}
	})
}

// A form without fields is a yes or no; a URL is shown with its host.
func TestElicitNoFieldsAndURL(t *testing.T) {
	tests := []struct {
		name   string
		e      chat.Elicitation
		label  string
		want   chat.ElicitAction
		text   []string
		ending string
	}{
		{name: "no fields: OK", e: chat.Elicitation{Server: "db", Mode: chat.ElicitForm, Message: "Drop the cache?"},
			label: okLabel, want: chat.ElicitAccept, text: []string{"<b>db</b> asks:\nDrop the cache?"}, ending: "✅ Answered by User 1001: sent to db."},
		{name: "url: done", e: chat.Elicitation{Server: "pay", Mode: chat.ElicitURL, Message: "Confirm the payment", URL: "https://pay.example.com/c?id=1&x=2", ID: "e-1"},
			label: doneLabel, want: chat.ElicitAccept,
			text:   []string{"<b>pay</b> asks you to open a page:\nConfirm the payment", "The page is on <b>pay.example.com</b>", `<a href="https://pay.example.com/c?id=1&amp;x=2">`},
			ending: "✅ User 1001 went to the page."},
		{name: "url: declined", e: chat.Elicitation{Server: "pay", Mode: chat.ElicitURL, URL: "https://pay.example.com/"},
			label: declineLabel, want: chat.ElicitDecline, ending: "❌ Declined by User 1001."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, nil)
				done := h.elicitIn(context.Background(), alice, tt.e)
				q := h.nth(t, alice, 1)
				for _, want := range tt.text {
					if !strings.Contains(q.Text, want) {
						t.Errorf("message %q lacks %q", q.Text, want)
					}
				}
				if !q.NoPreview {
					t.Error("the link would be previewed (fetched) before the user chose")
				}
				h.tap(t, alice, alice, q, tt.label, tt.label, false)
				if r := <-done; r.err != nil || r.res.Action != tt.want {
					t.Errorf("Elicit = %+v, %v; want %s", r.res, r.err, tt.want)
				}
				time.Sleep(telegram.DefaultLimits.ChatEvery)
				synctest.Wait()
				if m := h.fake.Sent(alice)[0]; !strings.HasSuffix(m.Text, "<i>"+tt.ending+"</i>") {
					t.Errorf("ends %q, want %q", m.Text, tt.ending)
				}
			})
		})
	}
}

// A URL question the server reports finished (notifications/elicitation/
// complete) while it is open ends as Done: the message says so, its
// buttons go, the server gets accept, and a later press has expired. Once
// Done was pressed, the server's word changes nothing.
func TestElicitURLCompleted(t *testing.T) {
	t.Run("while open", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := startBubbleBot(t, nil)
			completed := make(chan struct{})
			done := h.elicitIn(context.Background(), alice, chat.Elicitation{Server: "pay", Mode: chat.ElicitURL,
				Message: "Confirm the payment", URL: "https://pay.example.com/c", ID: "e-1", Completed: completed})
			q := h.nth(t, alice, 1)
			close(completed)
			select {
			case r := <-done:
				if r.err != nil || r.res.Action != chat.ElicitAccept {
					t.Errorf("Elicit = %+v, %v; want accept", r.res, r.err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the server's completion did not end the question")
			}
			time.Sleep(telegram.DefaultLimits.ChatEvery)
			synctest.Wait()
			m := h.fake.Sent(alice)[0]
			if !strings.HasSuffix(m.Text, "<i>✅ pay reports it finished.</i>") || m.Keyboard != nil {
				t.Errorf("the question ends %q (buttons %v)", m.Text, m.Keyboard)
			}
			h.tap(t, alice, alice, q, doneLabel, "This button has expired.", false)
		})
	})
	t.Run("after Done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := startBubbleBot(t, nil)
			completed := make(chan struct{})
			done := h.elicitIn(context.Background(), alice, chat.Elicitation{Server: "pay", Mode: chat.ElicitURL,
				URL: "https://pay.example.com/c", ID: "e-1", Completed: completed})
			q := h.nth(t, alice, 1)
			h.tap(t, alice, alice, q, doneLabel, doneLabel, false)
			if r := <-done; r.res.Action != chat.ElicitAccept {
				t.Errorf("Elicit = %+v", r.res)
			}
			close(completed)
			time.Sleep(3 * telegram.DefaultLimits.ChatEvery)
			synctest.Wait()
			if m := h.fake.Sent(alice)[0]; m.Edits() != 1 || !strings.HasSuffix(m.Text, "<i>✅ User 1001 went to the page.</i>") {
				t.Errorf("the question ends %q after %d edits, want one", m.Text, m.Edits())
			}
			if n := len(h.fake.Sent(alice)); n != 1 {
				t.Errorf("%d messages, want the question alone", n)
			}
		})
	})
}
