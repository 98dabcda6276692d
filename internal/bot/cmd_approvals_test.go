package bot

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

func someGrants() []session.Grant {
	at := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	return []session.Grant{
		{Server: "github", Tool: "create_issue", By: alice, At: at},
		{Server: "fake", Tool: "sleep", By: bob, At: at.AddDate(0, 0, 1)},
	}
}

// labels are a message's buttons, row by row.
func labels(m telegramtest.Message) [][]string {
	var out [][]string
	for _, row := range m.Keyboard {
		var r []string
		for _, b := range row {
			r = append(r, b.Text)
		}
		out = append(out, r)
	}
	return out
}

// /approvals lists the chat's grants with a button each and Revoke all;
// a press takes one back and the list shows what is left.
func TestApprovalsCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		h.sess.grants[chat.In(alice)] = someGrants()
		h.sess.grants[chat.In(bob)] = someGrants()
		h.fake.Message(alice, alice, "/approvals")
		msgs, err := h.fake.WaitSent(alice, 1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		list := msgs[0]
		wantText := "Approved always in this chat (their calls run without asking):\n" +
			"1. github: create_issue — by user 1001, 4 Mar 2026\n" +
			"2. fake: sleep — by user 1002, 5 Mar 2026\n" +
			"Press one to take it back: its next call asks again."
		if list.Text != wantText {
			t.Errorf("list %q, want %q", list.Text, wantText)
		}
		wantButtons := [][]string{{"Revoke 1. github: create_issue"}, {"Revoke 2. fake: sleep"}, {"Revoke all"}}
		if got := labels(list); !slices.EqualFunc(got, wantButtons, slices.Equal) {
			t.Fatalf("buttons %q, want %q", got, wantButtons)
		}
		for _, row := range list.Keyboard {
			if len(row[0].Data) > 64 {
				t.Errorf("button data %q is over Telegram's 64 bytes", row[0].Data)
			}
		}

		h.pressAll(t, []press{{chat: alice, user: alice, label: "Revoke 1. github: create_issue",
			answer: "Revoked github: create_issue. Its next call asks again."}}, list)
		settle()
		now := h.fake.Sent(alice)[0]
		if !strings.Contains(now.Text, "1. fake: sleep") || strings.Contains(now.Text, "github") {
			t.Errorf("the list after a revocation: %q", now.Text)
		}
		if got := labels(now); !slices.EqualFunc(got, [][]string{{"Revoke 1. fake: sleep"}}, slices.Equal) {
			t.Errorf("buttons after a revocation %q", got)
		}
		// The button pressed again (a second tap, a stale copy): nothing
		// more is revoked.
		h.pressAll(t, []press{{chat: alice, user: alice, data: list.Keyboard[0][0].Data, answer: grantGone}}, list)
		if got := h.sess.callsWith("revoke"); !slices.Equal(got, []string{"revoke 1001 github create_issue"}) {
			t.Errorf("revocations %q", got)
		}
		// Revoke all, from the first list's button.
		h.pressAll(t, []press{{chat: alice, user: alice, label: "Revoke all", answer: "Revoked 1 approval: their calls ask again."}}, list)
		settle()
		if now := h.fake.Sent(alice)[0]; now.Text != noGrants || now.Keyboard != nil {
			t.Errorf("the list once empty: %q, buttons %v", now.Text, now.Keyboard)
		}
		if got := h.sess.Calls(); !slices.Contains(got, "revoke all 1001") {
			t.Errorf("calls %q: no revoke all", got)
		}
		if got := h.sess.grants[chat.In(bob)]; len(got) != 2 {
			t.Errorf("another chat's grants changed: %+v", got)
		}
		// Once empty, /approvals says there is nothing, without buttons.
		h.fake.Message(alice, alice, "/approvals")
		msgs, err = h.fake.WaitSent(alice, 2, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		if msgs[1].Text != noGrants || msgs[1].Keyboard != nil {
			t.Errorf("/approvals without grants: %q, %v", msgs[1].Text, msgs[1].Keyboard)
		}
	})
}

// In a group anyone the bot allows may take an approval back (it only
// makes the bot ask more); a stranger's press and data the bot never made
// change nothing, and a button's data sent from another chat acts on that
// chat's own grants only.
func TestApprovalsPresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		h.sess.grants[chat.In(group)] = someGrants()
		h.sess.grants[chat.In(bob)] = someGrants()
		h.fake.Message(group, alice, "/approvals")
		msgs, err := h.fake.WaitSent(group, 1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		list := msgs[0]
		h.pressAll(t, []press{
			{chat: group, user: stranger, label: "Revoke all", answer: strangerPress, alert: true},
			{chat: group, user: alice, data: revokePrefix + "AAAAAAAAAAAAAAAA", answer: grantGone},
			{chat: group, user: alice, data: revokePrefix, answer: grantGone},
			{chat: bob, user: bob, label: "Revoke 2. fake: sleep", answer: "Revoked fake: sleep. Its next call asks again."},
			{chat: group, user: bob, label: "Revoke 2. fake: sleep", answer: "Revoked fake: sleep. Its next call asks again."},
		}, list)
		settle()
		if got := h.sess.callsWith("revoke"); !slices.Equal(got, []string{"revoke 1002 fake sleep", "revoke -1001234567890 fake sleep"}) {
			t.Errorf("revocations %q", got)
		}
		if g := h.sess.grants[chat.In(group)]; len(g) != 1 || g[0].Tool != "create_issue" {
			t.Errorf("the group's grants %+v", g)
		}
	})
}

// A file of grants that cannot be read is said so, and the operator's log
// has why.
func TestApprovalsUnreadable(t *testing.T) {
	h := startBot(t, nil)
	h.sess.mu.Lock()
	h.sess.grantsErr = &session.GrantsError{Err: errors.New("approvals/1001.json: unexpected end of JSON input")}
	h.sess.mu.Unlock()
	h.fake.Message(alice, alice, "/approvals")
	if got := h.texts(t, alice, 1)[0]; got != grantsUnreadable {
		t.Errorf("reply %q", got)
	}
	if !strings.Contains(h.logs.String(), "unexpected end of JSON input") {
		t.Errorf("the log lacks the cause:\n%s", h.logs)
	}
}
