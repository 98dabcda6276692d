package bot

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

func someNotes() []session.MemoryEntry {
	return []session.MemoryEntry{{Text: "Name: Ana", By: alice}, {Text: "Locker code 4711", By: alice}}
}

// /memory lists the chat's notes with a button each; a press deletes one
// and the list shows what is left; a stale press says the note is gone.
func TestMemoryCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		h.sess.memory[chat.In(alice)] = someNotes()
		h.sess.memory[chat.In(bob)] = someNotes()
		h.fake.Message(alice, alice, "/memory")
		msgs, err := h.fake.WaitSent(alice, 1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		list := msgs[0]
		wantText := "Kept in memory in this chat (I see these in every message, also after /new):\n" +
			"1. Name: Ana\n2. Locker code 4711\n" +
			"Press a button to delete a note; /memory clear deletes them all."
		if list.Text != wantText {
			t.Errorf("list %q, want %q", list.Text, wantText)
		}
		wantButtons := [][]string{{"🗑 1. Name: Ana"}, {"🗑 2. Locker code 4711"}}
		if got := labels(list); !slices.EqualFunc(got, wantButtons, slices.Equal) {
			t.Fatalf("buttons %q, want %q", got, wantButtons)
		}
		for _, row := range list.Keyboard {
			if len(row[0].Data) > 64 {
				t.Errorf("button data %q is over Telegram's 64 bytes", row[0].Data)
			}
		}
		h.pressAll(t, []press{{chat: alice, user: alice, label: "🗑 1. Name: Ana", answer: "Deleted: Name: Ana"}}, list)
		settle()
		now := h.fake.Sent(alice)[0]
		if !strings.Contains(now.Text, "1. Locker code 4711") || strings.Contains(now.Text, "Ana") {
			t.Errorf("the list after a delete: %q", now.Text)
		}
		if got := labels(now); !slices.EqualFunc(got, [][]string{{"🗑 1. Locker code 4711"}}, slices.Equal) {
			t.Errorf("buttons after a delete %q", got)
		}
		// The button pressed again (a second tap, a stale copy): nothing
		// more is deleted.
		h.pressAll(t, []press{{chat: alice, user: alice, data: list.Keyboard[0][0].Data, answer: memoryGone}}, list)
		if got := h.sess.callsWith("forget"); !slices.Equal(got, []string{"forget 1001 Name: Ana"}) {
			t.Errorf("deletes %q", got)
		}
		h.pressAll(t, []press{{chat: alice, user: alice, label: "🗑 2. Locker code 4711", answer: "Deleted: Locker code 4711"}}, list)
		settle()
		if now := h.fake.Sent(alice)[0]; now.Text != noMemory || now.Keyboard != nil {
			t.Errorf("the list once empty: %q, buttons %v", now.Text, now.Keyboard)
		}
		if got := h.sess.memory[chat.In(bob)]; len(got) != 2 {
			t.Errorf("another chat's notes changed: %+v", got)
		}
		h.fake.Message(alice, alice, "/memory")
		msgs, err = h.fake.WaitSent(alice, 2, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		if msgs[1].Text != noMemory || msgs[1].Keyboard != nil {
			t.Errorf("/memory without notes: %q, %v", msgs[1].Text, msgs[1].Keyboard)
		}
	})
}

// /memory clear deletes every note of the chat, and says how many; an
// argument it does not know gets the usage.
func TestMemoryClear(t *testing.T) {
	h := startBot(t, nil)
	h.sess.memory[chat.In(alice)] = someNotes()
	h.sess.memory[chat.In(bob)] = someNotes()
	h.fake.Message(alice, alice, "/memory clear")
	h.fake.Message(alice, alice, "/memory CLEAR")
	h.fake.Message(alice, alice, "/memory forget everything")
	got := h.texts(t, alice, 3)
	if want := []string{"Memory cleared: 2 notes deleted.", noMemory, memoryUsage}; !slices.Equal(got, want) {
		t.Errorf("replies %q, want %q", got, want)
	}
	if calls := h.sess.callsWith("clear memory"); !slices.Equal(calls, []string{"clear memory 1001", "clear memory 1001"}) {
		t.Errorf("calls %q", calls)
	}
	if len(h.sess.memory[chat.In(bob)]) != 2 {
		t.Error("another chat's notes were cleared")
	}
}

// In a group anyone the bot allows may delete a note; a stranger's press
// (a member the bot does not answer) and data the bot never made change
// nothing, and a button's data sent from another chat acts on that
// chat's own notes only.
func TestMemoryPresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		h.sess.memory[chat.In(group)] = someNotes()
		h.sess.memory[chat.In(bob)] = someNotes()
		h.fake.Message(group, alice, "/memory")
		msgs, err := h.fake.WaitSent(group, 1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		list := msgs[0]
		h.pressAll(t, []press{
			{chat: group, user: stranger, label: "🗑 1. Name: Ana", answer: strangerPress, alert: true},
			{chat: group, user: alice, data: memoryPrefix + "AAAAAAAAAAAAAAAA", answer: memoryGone},
			{chat: group, user: alice, data: memoryPrefix, answer: memoryGone},
			{chat: bob, user: bob, label: "🗑 2. Locker code 4711", answer: "Deleted: Locker code 4711"},
			{chat: group, user: bob, label: "🗑 2. Locker code 4711", answer: "Deleted: Locker code 4711"},
		}, list)
		settle()
		if got := h.sess.callsWith("forget"); !slices.Equal(got, []string{"forget 1002 Locker code 4711", "forget -1001234567890 Locker code 4711"}) {
			t.Errorf("deletes %q", got)
		}
		if n := h.sess.memory[chat.In(group)]; len(n) != 1 || n[0].Text != "Name: Ana" {
			t.Errorf("the group's notes %+v", n)
		}
	})
}

// A memory that cannot be read is said so, with the way out; the
// operator's log has why.
func TestMemoryUnreadable(t *testing.T) {
	h := startBot(t, nil)
	h.sess.mu.Lock()
	h.sess.memoryErr = &session.MemoryError{Err: errors.New("private/1001/memory.json: unexpected end of JSON input")}
	h.sess.mu.Unlock()
	h.fake.Message(alice, alice, "/memory")
	if got := h.texts(t, alice, 1)[0]; got != memoryUnreadable || !strings.Contains(got, "/memory clear") {
		t.Errorf("reply %q", got)
	}
	if !strings.Contains(h.logs.String(), "unexpected end of JSON input") {
		t.Errorf("the log lacks the cause:\n%s", h.logs)
	}
}

// Notes are scrubbed before they show, and a full memory fits one
// message: each note is cut to its share.
func TestMemoryMessage(t *testing.T) {
	scrub := strings.NewReplacer("hunter2", "[redacted]").Replace
	text, _ := memoryMessage([]session.MemoryEntry{{Text: "pw hunter2"}}, scrub)
	if strings.Contains(text, "hunter2") || !strings.Contains(text, "1. pw [redacted]") {
		t.Errorf("scrubbed: %q", text)
	}
	var full []session.MemoryEntry
	for i := range 8 {
		full = append(full, session.MemoryEntry{Text: strings.Repeat(string(rune('a'+i)), session.MemoryMaxEntry)})
	}
	text, kb := memoryMessage(full, scrub)
	if n := utf8.RuneCountInString(text); n > 4096 {
		t.Errorf("a full memory's list is %d characters", n)
	}
	if kb == nil {
		t.Error("no buttons")
	}
}
