package bot

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The refusal window runs on the bubble's clock: the test waits ten
// minutes in no real time.
func TestStrangerIsRefusedOncePerTenMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		want := refusalText(stranger)
		if !strings.Contains(want, "6666") || !strings.Contains(want, "TELEGRAM_ALLOWED_USERS") {
			t.Fatalf("refusal %q", want)
		}
		at := "@" + h.fake.Me().Username + " "
		h.fake.Message(stranger, stranger, "/start")
		synctest.Wait() // every message so far is handled
		if got := h.fake.Texts(stranger); len(got) != 1 || got[0] != want {
			t.Errorf("private chat got %q", got)
		}
		h.fake.Message(group, stranger, at+"are you there?")
		time.Sleep(refusalEvery - time.Minute)
		h.fake.Message(group, stranger, at+"still no?")
		time.Sleep(time.Minute - time.Second)
		h.fake.Message(group, stranger, at+"one second early")
		synctest.Wait()
		if got := h.fake.Texts(group); len(got) != 0 {
			t.Errorf("group got %q within ten minutes of the refusal", got)
		}
		time.Sleep(time.Second)
		h.fake.Message(group, stranger, at+"please")
		h.fake.Message(group, stranger, at+"please please")
		synctest.Wait()
		if got := h.fake.Texts(stranger); len(got) != 1 {
			t.Errorf("private chat got %q, want one refusal", got)
		}
		if got := h.fake.Texts(group); len(got) != 1 || got[0] != want {
			t.Errorf("group got %q, want one refusal", got)
		}
		if calls := h.sess.Calls(); len(calls) != 0 {
			t.Errorf("sessions were called for a stranger: %q", calls)
		}
	})
}

func TestRefusalLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAccess([]int64{alice}, nil)
		steps := []struct {
			advance time.Duration
			user    int64
			want    bool
		}{
			{0, stranger, true},
			{0, stranger, false},
			{0, stranger + 1, true},
			{9*time.Minute + 59*time.Second, stranger, false},
			{time.Second, stranger, true},
			{time.Minute, stranger, false},
		}
		for i, s := range steps {
			time.Sleep(s.advance)
			if got := a.shouldRefuse(s.user); got != s.want {
				t.Errorf("step %d: shouldRefuse(%d) = %v, want %v", i, s.user, got, s.want)
			}
		}
		if !a.allows(alice) || a.allows(stranger) || newAccess(nil, nil).allows(0) {
			t.Error("allows is wrong")
		}
	})
}

func TestStrangerInGroup(t *testing.T) {
	h := startBot(t, nil)
	h.fake.Message(group, stranger, "chatter the bot ignores")
	h.fake.Message(group, stranger, "@"+h.fake.Me().Username+" hi")
	h.fake.Message(group, stranger, "/new")
	h.fake.Message(group, alice, "@"+h.fake.Me().Username+" hi from alice")
	h.sess.waitCalls(t, "deliver", 1)
	if got := h.fake.Texts(group); len(got) != 1 || got[0] != refusalText(stranger) {
		t.Errorf("sent %q, want one refusal", got)
	}
	if calls := h.sess.Calls(); len(calls) != 1 || calls[0] != "deliver -1001234567890 hi from alice" {
		t.Errorf("calls %q", calls)
	}
}

func TestEmptyAllowlistIsLogged(t *testing.T) {
	h := startBot(t, func(o *testOptions) { o.AllowedUsers = nil })
	if !strings.Contains(h.logs.String(), "TELEGRAM_ALLOWED_USERS is empty") {
		t.Errorf("log lacks the empty allowlist warning:\n%s", h.logs)
	}
	h.fake.Message(alice, alice, "hi")
	if got := h.texts(t, alice, 1); got[0] != refusalText(alice) {
		t.Errorf("sent %q", got)
	}
}
