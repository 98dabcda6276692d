package bot

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// groupRig runs one group hand-off against the fake.
type groupRig struct {
	t      *testing.T
	h      *harness
	place  chat.Place
	live   *fakeLive
	cancel context.CancelFunc
	done   chan session.HandoffOutcome
}

func startGroupHandoff(t *testing.T, h *harness, place chat.Place, timeout time.Duration) *groupRig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &groupRig{t: t, h: h, place: place, live: newFakeLive(), cancel: cancel, done: make(chan session.HandoffOutcome, 1)}
	p := session.HandoffPrompt{UserID: alice, Reason: "Log in as <you>", Timeout: timeout, Live: r.live}
	go func() {
		o, err := h.bot.Chat().ShowHandoff(ctx, place, p)
		if err != nil {
			t.Error(err)
		}
		r.done <- o
	}()
	return r
}

// groupMsg waits for the group's message.
func (r *groupRig) groupMsg() telegramtest.Message {
	r.t.Helper()
	msgs, err := r.h.fake.WaitSent(r.place.Chat, 1, waitLong)
	if err != nil {
		r.t.Fatal(err)
	}
	return msgs[0]
}

// private is the first message sent to user's private chat of which cond
// holds (nil: any), once there is one.
func (r *groupRig) private(user int64, cond func(telegramtest.Message) bool) telegramtest.Message {
	r.t.Helper()
	var m telegramtest.Message
	if err := r.h.fake.WaitUntil(func() bool {
		for _, m = range r.h.fake.Sent(user) {
			if cond == nil || cond(m) {
				return true
			}
		}
		return false
	}, waitLong); err != nil {
		r.t.Fatalf("private message to %d: %v; sent %+v", user, err, r.h.fake.Sent(user))
	}
	return m
}

// groupSays waits until the group's message has text in it.
func (r *groupRig) groupSays(text string) telegramtest.Message {
	r.t.Helper()
	var m telegramtest.Message
	if err := r.h.fake.WaitUntil(func() bool {
		s := r.h.fake.Sent(r.place.Chat)
		if len(s) > 0 {
			m = s[0]
		}
		return strings.Contains(m.Text, text)
	}, waitLong); err != nil {
		r.t.Fatalf("the group's message %q does not say %q", m.Text, text)
	}
	return m
}

func (r *groupRig) press(p press, m telegramtest.Message) {
	r.t.Helper()
	r.h.pressAll(r.t, []press{p}, m)
}

// end waits for ShowHandoff and checks its outcome, and that each of the
// messages ends, without buttons, with its closing line.
func (r *groupRig) end(want session.HandoffOutcome, closed map[int64]string) {
	r.t.Helper()
	if o := <-r.done; o != want || r.live.Outcome() != want {
		r.t.Errorf("ShowHandoff = %v, the hand-off ended %v; want %v", o, r.live.Outcome(), want)
	}
	time.Sleep(time.Minute) // past every chat's pace: the closing edits are out
	synctest.Wait()
	for chatID, line := range closed {
		for _, m := range r.h.fake.Sent(chatID) {
			if m.Keyboard != nil || !strings.HasSuffix(m.Text, "\n\n<i>"+line+"</i>") {
				r.t.Errorf("chat %d's message %q (buttons %v); want it to end with %q, without buttons", chatID, m.Text, m.Keyboard, line)
			}
		}
	}
}

// noLinkInGroup fails if any call the bot made to the group carries the
// live view's link or a Mini App button: the link is for one user only.
func noLinkInGroup(t *testing.T, h *harness) {
	t.Helper()
	n := 0
	for _, req := range h.fake.Requests() {
		if req.ChatID() != group {
			continue
		}
		n++
		for k, v := range req.Params {
			if strings.Contains(v, "/live/") || strings.Contains(v, "web_app") {
				t.Errorf("%s to the group carries the link: %s=%s", req.Method, k, v)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d calls to the group; want the message and its closing edit at least", n)
	}
}

// hasLink reports whether m's Mini App button opens url.
func hasLink(m telegramtest.Message, url string) bool {
	b := linkOf(m)
	return b.URL == url && b.WebApp
}

const (
	firstLink = "https://bot.test/live/t/first"
	newLink   = "https://bot.test/live/t/new"
	sentLine  = "I sent the link to the live view to "
	doneLine  = "✅ Done: I take it from here."
)

// A group's hand-off: the link goes to the turn's user's private chat as a
// Mini App, never to the group; the group's message says where it went, or
// why it could not go and what to do; New link sends a new one to whoever
// pressed it (the turn's user, or an admin taking over); both messages
// close with the outcome.
func TestShowHandoffInAGroup(t *testing.T) {
	for _, tt := range groupHandoffCases() {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, func(o *testOptions) { o.Admins = []int64{admin} })
				if tt.setup != nil {
					tt.setup(h.fake)
					synctest.Wait() // a topic's message is taken first
				}
				tt.run(startGroupHandoff(t, h, tt.place, 5*time.Minute))
				noLinkInGroup(t, h)
			})
		})
	}
}

// groupHandoffCase is one of TestShowHandoffInAGroup's: what the fake
// does first, and the steps.
type groupHandoffCase struct {
	name  string
	place chat.Place
	setup func(f *telegramtest.Fake)
	run   func(r *groupRig)
}

const aliceMention = `<a href="tg://user?id=1001">the person who asked</a>`

func groupHandoffCases() []groupHandoffCase {
	return append(groupHandoffSent(), groupHandoffNotSent()...)
}

// groupHandoffSent are the cases whose link reaches the private chat.
func groupHandoffSent() []groupHandoffCase {
	return []groupHandoffCase{
		{name: "sent privately, Done there", place: chat.In(group), setup: func(f *telegramtest.Fake) {
			f.Message(group, bob, "hello") // not to the bot: it names the group
		}, run: func(r *groupRig) {
			g := r.groupSays(sentLine + aliceMention)
			if !strings.Contains(g.Text, "Log in as &lt;you&gt;") || len(g.Keyboard) != 1 {
				r.t.Errorf("the group's message %q, buttons %v", g.Text, g.Keyboard)
			}
			m := r.private(alice, func(m telegramtest.Message) bool { return hasLink(m, firstLink) })
			if !strings.Contains(m.Text, "for the group <b>Supergroup -1001234567890</b>\nLog in as &lt;you&gt;") {
				r.t.Errorf("the private message %q does not name the group and give the reason", m.Text)
			}
			r.press(press{chat: alice, user: alice, label: "✅ Done", answer: "✅ Done"}, m)
			r.end(session.HandoffDone, map[int64]string{group: doneLine, alice: doneLine})
		}},
		{name: "others refused, an admin's New link goes to the admin", place: chat.In(group), run: func(r *groupRig) {
			g := r.groupMsg()
			r.private(alice, nil)
			r.press(press{chat: group, user: stranger, label: "✅ Done", answer: strangerPress, alert: true}, g)
			r.press(press{chat: group, user: bob, label: "🔄 New link", answer: handoffRefusal, alert: true}, g)
			r.press(press{chat: group, user: bob, label: "✅ Done", answer: handoffRefusal, alert: true}, g)
			r.press(press{chat: group, user: admin, label: "🔄 New link", answer: "🔄 New link"}, g)
			r.private(admin, func(m telegramtest.Message) bool { return hasLink(m, newLink) })
			r.private(alice, func(m telegramtest.Message) bool {
				return m.Keyboard == nil && strings.HasSuffix(m.Text, "This link was replaced by a new one.</i>")
			})
			r.groupSays(sentLine + `<a href="tg://user?id=1003">the admin who asked for a new link</a>`)
			r.live.End(session.HandoffDone) // Done in the view
			r.end(session.HandoffDone, map[int64]string{group: doneLine, admin: doneLine})
		}},
		{name: "New link in the private chat replaces its button", place: chat.In(group), run: func(r *groupRig) {
			m := r.private(alice, nil)
			r.press(press{chat: alice, user: alice, label: "🔄 New link", answer: "🔄 New link"}, m)
			r.private(alice, func(m telegramtest.Message) bool { return hasLink(m, newLink) })
			r.end(session.HandoffTimeout, map[int64]string{group: "⌛ Nobody pressed Done within 5 minutes.", alice: "⌛ Nobody pressed Done within 5 minutes."})
			if n := len(r.h.fake.Sent(alice)); n != 1 {
				r.t.Errorf("%d private messages; want the one, edited", n)
			}
		}},
		{name: "a topic", place: chat.Place{Chat: group, Topic: 7}, setup: func(f *telegramtest.Fake) {
			f.TopicMessage(group, bob, 7, "hello") // not to the bot: it only names the topic
		}, run: func(r *groupRig) {
			if g := r.groupMsg(); g.ThreadID != 7 {
				r.t.Errorf("the group's message went to topic %d", g.ThreadID)
			}
			m := r.private(alice, nil)
			if !strings.Contains(m.Text, "for the group <b>Supergroup -1001234567890</b>, topic <b>Topic 7</b>") {
				r.t.Errorf("the private message %q does not name the topic", m.Text)
			}
			r.press(press{chat: group, user: alice, label: "✅ Done", answer: "✅ Done"}, r.groupMsg())
			r.end(session.HandoffDone, map[int64]string{group: doneLine, alice: doneLine})
		}},
	}
}

// groupHandoffNotSent are the cases whose private send fails.
func groupHandoffNotSent() []groupHandoffCase {
	return []groupHandoffCase{
		{name: "not started: the group says how; New link after /start", place: chat.In(group),
			setup: func(f *telegramtest.Fake) { f.NotStarted(alice) }, run: func(r *groupRig) {
				g := r.groupSays("I could not send the link to " + aliceMention + " in a private chat: they have not started one with me, or blocked me.")
				if !strings.Contains(g.Text, `<a href="https://t.me/volcanic_test_bot">@volcanic_test_bot</a>, press Start, then press New link here.`) {
					r.t.Errorf("the group's message %q does not say how to start the private chat", g.Text)
				}
				r.press(press{chat: group, user: alice, label: "🔄 New link", answer: "🔄 New link"}, g) // not started yet
				synctest.Wait()
				if n := len(r.h.fake.Sent(alice)); n != 0 || r.live.relinks != 1 {
					r.t.Fatalf("New link before /start: %d private messages, %d new links; want none and one", n, r.live.relinks)
				}
				r.h.fake.Message(alice, alice, "/start")
				r.h.texts(r.t, alice, 1) // the bot's answer to /start
				r.press(press{chat: group, user: alice, label: "🔄 New link", answer: "🔄 New link"}, g)
				r.private(alice, func(m telegramtest.Message) bool { return hasLink(m, newLink) })
				r.groupSays(sentLine + aliceMention)
				synctest.Wait()
				r.cancel() // /stop
				r.end(session.HandoffStopped, map[int64]string{group: "⏹ Stopped."})
				r.private(alice, func(m telegramtest.Message) bool {
					return m.Keyboard == nil && strings.HasSuffix(m.Text, "do not forward it.</i>\n\n<i>⏹ Stopped.</i>")
				})
			}},
		{name: "blocked", place: chat.In(group), setup: func(f *telegramtest.Fake) { f.Blocked(alice) }, run: func(r *groupRig) {
			r.groupSays("they have not started one with me, or blocked me.")
			r.end(session.HandoffTimeout, map[int64]string{group: "⌛ Nobody pressed Done within 5 minutes."})
		}},
		{name: "chat not found", place: chat.In(group), setup: func(f *telegramtest.Fake) {
			f.FailNext("sendMessage", http.StatusBadRequest, "Bad Request: chat not found", 0)
		}, run: func(r *groupRig) {
			r.groupSays("they have not started one with me, or blocked me.")
			r.end(session.HandoffTimeout, map[int64]string{group: "⌛ Nobody pressed Done within 5 minutes."})
		}},
		{name: "Telegram refuses otherwise", place: chat.In(group), setup: func(f *telegramtest.Fake) {
			f.FailNext("sendMessage", http.StatusBadRequest, "Bad Request: something else", 0)
		}, run: func(r *groupRig) {
			r.groupSays("I could not send the link in a private chat (Telegram did not take it). Press New link to try again.")
			r.end(session.HandoffTimeout, map[int64]string{group: "⌛ Nobody pressed Done within 5 minutes."})
		}},
	}
}
