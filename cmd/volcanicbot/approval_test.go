package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// The approvals end to end: the fake server under "approval": "writes"
// (its echo says it only reads, sleep says nothing, so it may write), the
// model asking for sleep, the chat deciding through the fake Bot API's
// callback_query updates.

const (
	eve        = int64(300) // allowed, and one of TELEGRAM_ADMINS
	groupChat  = int64(-4242)
	sleepArgs  = `{"ms":1}`
	slept      = "result: slept 1 ms"
	denied     = "result: ERROR: The user denied this call." // a denial is an error result: OpenAI's wire says so in the text
	approvalQ  = "May I run this tool?"
	approveBtn = "✅ Approve"
	denyBtn    = "❌ Deny"
	alwaysBtn  = "Always in this chat"
)

// sleepThenReport asks for sleep, then answers with what it returned.
func sleepThenReport(req llmtest.Request) llmtest.Reply {
	if res, ok := toolResultText(req); ok {
		return llmtest.Text("result: " + res)
	}
	return call("sleep", sleepArgs)
}

func startApprovalDaemon(t *testing.T, o daemonOptions) *daemon {
	t.Helper()
	o.fake = map[string]any{"approval": "writes"}
	o.modes = append(o.modes, fakemcp.ModeLogCalls)
	o.extra = append(o.extra, fmt.Sprintf("TELEGRAM_ADMINS=%d", eve))
	return startDaemon(t, sleepThenReport, o)
}

// waitApproval waits for the n-th approval message of chat (1: the first)
// to be sent with its buttons, and returns it.
func (d *daemon) waitApproval(chat int64, n int) telegramtest.Message {
	d.t.Helper()
	var q telegramtest.Message
	if err := d.tg.WaitUntil(func() bool {
		seen := 0
		for _, m := range d.tg.Sent(chat) {
			if strings.Contains(m.Text, approvalQ) {
				if seen++; seen == n && m.Keyboard != nil {
					q = m
					return true
				}
			}
		}
		return false
	}, 20*time.Second); err != nil {
		d.t.Fatalf("chat %d never got approval %d; got %q", chat, n, d.tg.Texts(chat))
	}
	return q
}

// press presses label on msg as user and returns the bot's answer.
func (d *daemon) press(chat, user int64, msg telegramtest.Message, label string) telegramtest.CallbackAnswer {
	d.t.Helper()
	id, err := d.tg.Press(chat, user, msg.ID, label)
	if err != nil {
		d.t.Fatal(err)
	}
	a, err := d.tg.WaitAnswer(id, 20*time.Second)
	if err != nil {
		d.t.Fatal(err)
	}
	return a
}

// waitDecided waits for the approval message to show its outcome, without
// buttons.
func (d *daemon) waitDecided(chat int64, msg telegramtest.Message, outcome string) {
	d.t.Helper()
	if !d.closed(chat, msg, outcome) {
		d.t.Fatalf("the approval never showed %q: %q", outcome, d.tg.Texts(chat))
	}
}

// closed waits for msg to lose its buttons and end with outcome, and
// reports whether it did.
func (d *daemon) closed(chat int64, msg telegramtest.Message, outcome string) bool {
	return d.tg.WaitUntil(func() bool {
		for _, m := range d.tg.Sent(chat) {
			if m.ID == msg.ID && m.Keyboard == nil && strings.HasSuffix(m.Text, "<i>"+outcome+"</i>") {
				return true
			}
		}
		return false
	}, 20*time.Second) == nil
}

// sleepCalls is how many times the fake server ran sleep.
func (d *daemon) sleepCalls() int {
	n := 0
	for _, e := range fakemcp.Filter(fakemcp.ReadLog(d.t, d.mcpLog), fakemcp.EventCall) {
		if e.Tool == fakemcp.ToolSleep {
			n++
		}
	}
	return n
}

func TestE2EApproval(t *testing.T) {
	tests := []struct {
		name    string
		extra   []string
		act     func(d *daemon, q telegramtest.Message)
		answer  string
		outcome string
		ran     bool
	}{
		{name: "approved", act: func(d *daemon, q telegramtest.Message) {
			if a := d.press(alice, alice, q, approveBtn); a.Text != approveBtn || a.ShowAlert {
				t.Errorf("press answered %+v", a)
			}
		}, answer: slept, outcome: "✅ Approved by User 100.", ran: true},
		{name: "denied", act: func(d *daemon, q telegramtest.Message) { d.press(alice, alice, q, denyBtn) },
			answer: denied, outcome: "❌ Denied by User 100."},
		{name: "no answer in time", extra: []string{"APPROVAL_TIMEOUT_SECONDS=1"}, act: func(*daemon, telegramtest.Message) {},
			answer: "result: ERROR: The user denied this call: nobody approved it within 1 second.", outcome: "⌛ No answer within 1 second: denied."},
		{name: "/stop", act: func(d *daemon, _ telegramtest.Message) { d.tg.Message(alice, alice, "/stop") },
			answer: "Stopped.", outcome: "⏹ Stopped: not run."},
		{name: "forged presses change nothing", act: func(d *daemon, q telegramtest.Message) {
			for _, data := range []string{"approve", "q:" + strings.Repeat("A", 26) + ":0", q.Keyboard[0][0].Data + "0"} {
				if a, _ := d.tg.WaitAnswer(d.tg.Callback(alice, alice, q.ID, data), 20*time.Second); a.Text != "This button has expired." {
					t.Errorf("forged %q answered %+v", data, a)
				}
			}
			// The button pressed on another message, and in another chat.
			for _, p := range []struct {
				chat  int64
				msgID int
			}{{alice, q.ID + 1000}, {bob, q.ID}} {
				if a, _ := d.tg.WaitAnswer(d.tg.Callback(p.chat, p.chat, p.msgID, q.Keyboard[0][0].Data), 20*time.Second); a.Text != "This button has expired." {
					t.Errorf("press in chat %d on message %d answered %+v", p.chat, p.msgID, a)
				}
			}
			if n := d.sleepCalls(); n != 0 {
				t.Errorf("sleep ran %d times before anyone approved", n)
			}
			d.press(alice, alice, q, denyBtn)
		}, answer: denied, outcome: "❌ Denied by User 100."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := startApprovalDaemon(t, daemonOptions{extra: tt.extra})
			d.tg.Message(alice, alice, "sleep a little")
			q := d.waitApproval(alice, 1)
			for _, want := range []string{"Server <b>fake</b>, tool <code>sleep</code>.", "It may delete or overwrite data and talks to the outside world.",
				"<pre><code class=\"language-json\">{\n  &#34;ms&#34;: 1\n}</code></pre>"} {
				if !strings.Contains(q.Text, want) {
					t.Errorf("approval %q lacks %q", q.Text, want)
				}
			}
			if len(q.Keyboard) != 2 || q.Keyboard[1][0].Text != alwaysBtn {
				t.Errorf("buttons %+v", q.Keyboard)
			}
			tt.act(d, q)
			d.waitText(alice, tt.answer)
			d.waitDecided(alice, q, tt.outcome)
			if n := d.sleepCalls(); (n == 1) != tt.ran || n > 1 {
				t.Errorf("sleep ran %d times", n)
			}
			// The turn is over: its buttons (gone from the message, but a
			// client may still show them) have expired.
			if a, err := d.tg.WaitAnswer(d.tg.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data), 20*time.Second); err != nil || a.Text != "This button has expired." {
				t.Errorf("a press after the decision answered %+v, %v", a, err)
			}
		})
	}
}

// "Always in this chat" approves the tool for the chat: the next call runs
// without asking, there and after a restart, but not in another chat. A
// read-only tool never asks.
func TestE2EApprovalAlwaysInThisChat(t *testing.T) {
	dataDir, tg := t.TempDir(), newTelegram(t)
	d := startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "sleep")
	q := d.waitApproval(alice, 1)
	d.press(alice, alice, q, alwaysBtn)
	d.waitDecided(alice, q, "✅ Approved by User 100, for every call of sleep in this chat.")
	d.waitText(alice, slept)
	d.tg.Message(alice, alice, "again")
	waitTexts(t, d, alice, slept, 2)
	d.stop()

	d = startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "after a restart")
	waitTexts(t, d, alice, slept, 3)
	d.tg.Message(bob, bob, "sleep")
	d.waitApproval(bob, 1)
	if n := approvals(d, alice); n != 1 {
		t.Errorf("alice was asked %d times, want once", n)
	}
}

// /approvals takes back an "Always in this chat": kept across /new and a
// restart, listed with a button, and once revoked the next call asks
// again. A list sent before the restart still works.
func TestE2ERevokeAlwaysInThisChat(t *testing.T) {
	dataDir, tg := t.TempDir(), newTelegram(t)
	d := startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "sleep")
	q := d.waitApproval(alice, 1)
	d.press(alice, alice, q, alwaysBtn)
	d.waitText(alice, slept)
	d.tg.Message(alice, alice, "/new")
	d.waitText(alice, "New conversation started.")
	d.tg.Message(alice, alice, "/approvals")
	d.waitText(alice, "Approved always in this chat (their calls run without asking):\n1. fake: sleep — by user 100, ")
	var list telegramtest.Message
	for _, m := range d.tg.Sent(alice) {
		if strings.HasPrefix(m.Text, "Approved always") {
			list = m
		}
	}
	d.stop()

	d = startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "after /new and a restart")
	waitTexts(t, d, alice, slept, 2)
	if a := d.press(alice, alice, list, "Revoke 1. fake: sleep"); a.Text != "Revoked fake: sleep. Its next call asks again." || a.ShowAlert {
		t.Errorf("the press answered %+v", a)
	}
	d.waitText(alice, "Nothing is approved always in this chat: a tool that asks first asks at every call. "+
		"(\"Always in this chat\" under an approval question adds the tool here.)")
	d.tg.Message(alice, alice, "sleep once more")
	d.waitApproval(alice, 2)
	if n := approvals(d, alice); n != 2 {
		t.Errorf("asked %d times, want twice", n)
	}
}

// waitTexts waits for n messages of chat with the text.
func waitTexts(t *testing.T, d *daemon, chat int64, text string, n int) {
	t.Helper()
	if err := d.tg.WaitUntil(func() bool {
		got := 0
		for _, s := range d.texts(chat) {
			if s == text {
				got++
			}
		}
		return got >= n
	}, 20*time.Second); err != nil {
		t.Fatalf("chat %d: want %d × %q, got %q", chat, n, text, d.texts(chat))
	}
}

func approvals(d *daemon, chat int64) int {
	n := 0
	for _, m := range d.tg.Sent(chat) {
		if strings.Contains(m.Text, approvalQ) {
			n++
		}
	}
	return n
}

// In a group only the user whose message started the turn, or an admin,
// decides; other members get an alert and change nothing.
func TestE2EApprovalInAGroup(t *testing.T) {
	d := startApprovalDaemon(t, daemonOptions{})
	mention := "@" + d.tg.Me().Username
	d.tg.Message(groupChat, alice, mention+" sleep")
	q := d.waitApproval(groupChat, 1)
	if a := d.press(groupChat, bob, q, approveBtn); !a.ShowAlert || !strings.Contains(a.Text, "Only the person whose message started this") {
		t.Errorf("bob's press answered %+v", a)
	}
	if a := d.press(groupChat, 999, q, approveBtn); !a.ShowAlert || !strings.Contains(a.Text, "not allowed") {
		t.Errorf("a stranger's press answered %+v", a)
	}
	if n := d.sleepCalls(); n != 0 {
		t.Fatalf("sleep ran %d times", n)
	}
	d.press(groupChat, alice, q, approveBtn)
	d.waitDecided(groupChat, q, "✅ Approved by User 100.")
	d.waitText(groupChat, slept)

	// An admin decides for someone else's turn.
	d.tg.Message(groupChat, bob, mention+" sleep again")
	q = d.waitApproval(groupChat, 2)
	d.press(groupChat, eve, q, denyBtn)
	d.waitDecided(groupChat, q, "❌ Denied by User 300.")
	d.waitText(groupChat, denied)
}

// The buttons of a turn the bot was restarted in have expired.
func TestE2EApprovalExpiresWithARestart(t *testing.T) {
	dataDir := t.TempDir()
	tg := newTelegram(t)
	d := startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "sleep")
	q := d.waitApproval(alice, 1)
	d.stop()
	// Shutting down closed the question (its buttons are gone); a press
	// that was on its way meanwhile comes to the next run.
	d.waitDecided(alice, q, "⏹ Stopped: not run.")
	d = startApprovalDaemon(t, daemonOptions{dataDir: dataDir, tg: tg})
	if a, err := tg.WaitAnswer(tg.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data), 20*time.Second); err != nil || a.Text != "This button has expired." {
		t.Errorf("a press after the restart answered %+v, %v", a, err)
	}
	if n := d.sleepCalls(); n != 0 {
		t.Errorf("sleep ran %d times", n)
	}
}
