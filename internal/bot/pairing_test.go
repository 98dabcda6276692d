package bot

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/pairing"
)

var codeRe = regexp.MustCompile(`this code: ([A-Z0-9]{8})`)

// pairingBot runs a bot in a synctest bubble whose admin is admin and
// whose added users live in dir.
func pairingBot(t *testing.T, dir string) *harness {
	t.Helper()
	return startBubbleBot(t, func(o *testOptions) {
		o.Admins = []int64{admin}
		o.Pairing = pairing.New(dir, nil, nil)
	})
}

// settle lets the bubble's clock run past the paced sender's gaps (a
// message a second in a chat), then waits for every goroutine to block.
func settle() {
	time.Sleep(3 * time.Second)
	synctest.Wait()
}

// lastText is the newest message sent to chat.
func lastText(h *harness, chat int64) string {
	got := h.fake.Texts(chat)
	if len(got) == 0 {
		return ""
	}
	return got[len(got)-1]
}

// A stranger is refused with a code, an admin adds them with /allow, they
// are told, and their next message reaches the session — also after a
// restart of the bot. /revoke ends it.
func TestPairing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "access")
		h := pairingBot(t, dir)
		h.fake.Message(stranger, stranger, "hello")
		settle()
		refusal := lastText(h, stranger)
		m := codeRe.FindStringSubmatch(refusal)
		if m == nil || !strings.Contains(refusal, "/allow "+m[1]) || !strings.Contains(refusal, strconv.Itoa(stranger)) {
			t.Fatalf("refusal %q: want a code, how to use it and the user id", refusal)
		}
		code := m[1]

		// An allowed user who is no admin cannot add anyone.
		h.fake.Message(alice, alice, "/allow "+code)
		settle()
		if got := lastText(h, alice); !strings.Contains(got, "Only an admin (TELEGRAM_ADMINS)") {
			t.Errorf("alice's /allow: %q", got)
		}

		h.fake.Message(admin, admin, "/allow "+strings.ToLower(code[:4])+"-"+code[4:])
		settle()
		if got := lastText(h, admin); !strings.Contains(got, "Added User 6666 (@user6666) (id 6666)") {
			t.Errorf("the admin's /allow: %q", got)
		}
		if got := lastText(h, stranger); got != "You have access now: send me a message." {
			t.Errorf("the new user was told %q", got)
		}
		h.fake.Message(stranger, stranger, "now may I?")
		settle()
		if got := h.sess.callsWith("deliver 6666"); len(got) != 1 || got[0] != "deliver 6666 now may I?" {
			t.Errorf("the added user's message: %q", got)
		}

		h.fake.Message(admin, admin, "/allow "+code)
		settle()
		if got := lastText(h, admin); !strings.Contains(got, "used already, by admin 1003 at ") {
			t.Errorf("a code used twice: %q", got)
		}
		h.fake.Message(admin, admin, "/users")
		settle()
		if got := lastText(h, admin); !strings.Contains(got, "User 6666 (@user6666) (id 6666) — by 1003, ") ||
			!strings.Contains(got, "Allowed (TELEGRAM_ALLOWED_USERS): 1001, 1002") {
			t.Errorf("/users: %q", got)
		}
		h.fake.Message(alice, alice, "/help")
		h.fake.Message(admin, admin, "/help")
		settle()
		if strings.Contains(lastText(h, alice), "/allow") || !strings.Contains(lastText(h, admin), "/allow <code>") {
			t.Errorf("/help shows the admin commands to alice or not to the admin:\n%s\n---\n%s", lastText(h, alice), lastText(h, admin))
		}
		for _, c := range h.fake.Commands() {
			if c.Command == "allow" || c.Command == "revoke" || c.Command == "users" {
				t.Errorf("setMyCommands lists /%s to everyone", c.Command)
			}
		}
	})

	// Kept across a restart (a new bot on the same folder); /revoke ends
	// it at the next message.
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "access")
		store := pairing.New(dir, nil, nil)
		req, err := store.Code(stranger, stranger, "Stranger")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.Allow(req.Code, admin); err != nil {
			t.Fatal(err)
		}
		h := pairingBot(t, dir)
		h.fake.Message(stranger, stranger, "after a restart")
		settle()
		if got := h.sess.callsWith("deliver 6666"); len(got) != 1 {
			t.Errorf("after a restart the added user's message: %q", got)
		}
		h.fake.Message(admin, admin, "/revoke 6666")
		h.fake.Message(admin, admin, "/revoke 1001")
		settle()
		got := h.fake.Texts(admin)
		if len(got) != 2 || !strings.Contains(got[0], "Removed 6666") || !strings.Contains(got[1], "TELEGRAM_ALLOWED_USERS") {
			t.Errorf("/revoke: %q", got)
		}
		h.fake.Message(stranger, stranger, "still here?")
		settle()
		if got := h.sess.callsWith("deliver 6666"); len(got) != 1 {
			t.Errorf("a revoked user's message reached the session: %q", got)
		}
		if ok, _ := store.Allowed(stranger); ok {
			t.Errorf("the store still has the revoked user")
		}
	})
}

// /allow with a wrong, expired or malformed code says so; so does an
// admin command from a bot without admins.
func TestAllowRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "access")
		h := pairingBot(t, dir)
		h.fake.Message(stranger, stranger, "hi")
		settle()
		code := codeRe.FindStringSubmatch(lastText(h, stranger))[1]
		time.Sleep(pairing.CodeTTL)
		for _, tc := range []struct{ send, want string }{
			{"/allow", "Usage: /allow <code>"},
			{"/allow ZZZZZZZZ", `No such code: "ZZZZZZZZ"`},
			{"/allow " + code, "That code expired at "},
			{"/revoke", "Usage: /revoke <user id>"},
			{"/revoke abc", "Usage: /revoke <user id>"},
			{"/revoke 4242", "4242 was not added"},
		} {
			h.fake.Message(admin, admin, tc.send)
			settle()
			if got := lastText(h, admin); !strings.Contains(got, tc.want) {
				t.Errorf("%s: %q, want %q", tc.send, got, tc.want)
			}
		}
		if got := h.sess.callsWith("deliver 6666"); len(got) != 0 {
			t.Errorf("the stranger got in: %q", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, func(o *testOptions) { o.Pairing = pairing.New(filepath.Join(t.TempDir(), "access"), nil, nil) })
		h.fake.Message(alice, alice, "/users")
		settle()
		if got := lastText(h, alice); !strings.Contains(got, "none is set (TELEGRAM_ADMINS)") || !strings.Contains(got, "volcanicbot allow <code>") {
			t.Errorf("/users without admins: %q", got)
		}
	})
}

// The operator adds a user on the host while the bot runs: the next
// message of that user is taken.
func TestHostAllowWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "access")
		h := pairingBot(t, dir)
		h.fake.Message(stranger, stranger, "hi")
		settle()
		code := codeRe.FindStringSubmatch(lastText(h, stranger))[1]
		host := pairing.New(dir, nil, nil)
		if _, _, err := host.Allow(code, 0); err != nil {
			t.Fatal(err)
		}
		h.fake.Message(stranger, stranger, "and now?")
		settle()
		if got := h.sess.callsWith("deliver 6666"); len(got) != 1 {
			t.Errorf("after the host's allow: %q", got)
		}
	})
}
