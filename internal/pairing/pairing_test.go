package pairing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func newStore(t *testing.T) (*Store, *testkit.Clock, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "access")
	c := testkit.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	return New(dir, c.Now, nil), c, dir
}

func TestCodeIsOnePerUserUntilItExpires(t *testing.T) {
	s, c, _ := newStore(t)
	a, err := s.Code(7, 70, "  Alice \n Smith ")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Code) != CodeLen || strings.Trim(a.Code, codeAlphabet) != "" {
		t.Errorf("code %q: want %d characters of %s", a.Code, CodeLen, codeAlphabet)
	}
	if a.Name != "Alice Smith" || a.ChatID != 70 || !a.Expires.Equal(c.Now().Add(CodeTTL)) {
		t.Errorf("request %+v", a)
	}
	again, _ := s.Code(7, 70, "Alice")
	if again.Code != a.Code {
		t.Errorf("a second refusal gave a new code %q, want the live one %q", again.Code, a.Code)
	}
	b, _ := s.Code(8, 80, "Bob")
	if b.Code == a.Code {
		t.Errorf("two users share the code %q", a.Code)
	}
	c.Advance(CodeTTL)
	renewed, _ := s.Code(7, 70, "Alice")
	if renewed.Code == a.Code {
		t.Errorf("an expired code was given again")
	}
}

func TestAllow(t *testing.T) {
	s, c, _ := newStore(t)
	req, _ := s.Code(7, 70, "Alice")
	expired, _ := s.Code(9, 90, "Eve")
	c.Advance(30 * time.Minute)
	s2 := New(s.Dir(), c.Now, nil) // the host's volcanicbot allow, beside the bot
	if _, err := s2.Code(10, 100, "Late"); err != nil {
		t.Fatal(err)
	}
	c.Advance(31 * time.Minute) // Eve's code (and Alice's) expired; Late's not

	tests := []struct {
		name, code string
		want       error
	}{
		{"unknown", "ZZZZZZZZ", ErrUnknownCode},
		{"expired", expired.Code, ErrExpired},
		{"empty", "", ErrUnknownCode},
	}
	for _, tc := range tests {
		if _, _, err := s.Allow(tc.code, 1); !errors.Is(err, tc.want) {
			t.Errorf("%s: Allow(%q) = %v, want %v", tc.name, tc.code, err, tc.want)
		}
	}

	// A live code, typed in lower case and in groups: added, once.
	fresh, _ := s2.Code(11, 110, "Carol")
	typed := strings.ToLower(fresh.Code[:4]) + "-" + fresh.Code[4:]
	u, r, err := s.Allow(typed, 42)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != 11 || u.Name != "Carol" || u.AddedBy != 42 || r.ChatID != 110 {
		t.Errorf("added %+v from %+v", u, r)
	}
	if _, r, err := s.Allow(fresh.Code, 43); !errors.Is(err, ErrUsed) || r.UsedBy != 42 || r.Used == nil {
		t.Errorf("the code used again: %v, %+v; want ErrUsed naming admin 42", err, r)
	}
	if ok, err := s.Allowed(11); !ok || err != nil {
		t.Errorf("Allowed(11) = %v, %v", ok, err)
	}
	if ok, _ := s.Allowed(req.UserID); ok {
		t.Errorf("a user whose code was never used is allowed")
	}
}

// The host adds a user while the bot runs: the bot's store sees it at the
// next look, and a revocation too.
func TestAllowedSeesTheHostsChanges(t *testing.T) {
	bot, c, dir := newStore(t)
	host := New(dir, c.Now, nil)
	if ok, err := bot.Allowed(7); ok || err != nil {
		t.Fatalf("before: %v %v", ok, err)
	}
	req, _ := bot.Code(7, 70, "Alice")
	if _, _, err := host.Allow(req.Code, 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := bot.Allowed(7); !ok || err != nil {
		t.Errorf("after the host's allow: %v %v", ok, err)
	}
	if found, err := host.Revoke(7); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if ok, _ := bot.Allowed(7); ok {
		t.Errorf("still allowed after the host's revoke")
	}
	if found, _ := host.Revoke(7); found {
		t.Errorf("revoked twice")
	}
	users, _ := bot.Users()
	if len(users) != 0 {
		t.Errorf("users %+v", users)
	}
}

func TestFilesAreTheBotsOnly(t *testing.T) {
	s, _, dir := newStore(t)
	req, _ := s.Code(7, 70, "Alice")
	if _, _, err := s.Allow(req.Code, 1); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("folder: %v %v", fi.Mode(), err)
	}
	for _, name := range []string{"users.json", "requests.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", name, fi.Mode(), err)
		}
	}
}

func TestTooManyWaiting(t *testing.T) {
	s, c, _ := newStore(t)
	for i := range MaxPending {
		if _, err := s.Code(int64(1000+i), 1, "x"); err != nil {
			t.Fatalf("code %d: %v", i, err)
		}
	}
	if _, err := s.Code(1, 1, "one too many"); !errors.Is(err, ErrBusy) {
		t.Errorf("past MaxPending: %v, want ErrBusy", err)
	}
	if r, err := s.Code(1000, 1, "x"); err != nil || r.Code == "" {
		t.Errorf("one who waits already still gets their code: %v", err)
	}
	c.Advance(CodeTTL)
	if _, err := s.Code(1, 1, "later"); err != nil {
		t.Errorf("after the codes expired: %v", err)
	}
}

// Ended codes are remembered for a day (to say "expired" or "used"), then
// dropped: the file does not grow with every stranger.
func TestEndedCodesAreDropped(t *testing.T) {
	s, c, dir := newStore(t)
	old, _ := s.Code(7, 70, "Alice")
	c.Advance(CodeTTL + keepEnded + time.Minute)
	if _, err := s.Code(8, 80, "Bob"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "requests.json"))
	if strings.Contains(string(b), old.Code) {
		t.Errorf("a code ended over a day ago is kept: %s", b)
	}
	if _, _, err := s.Allow(old.Code, 1); !errors.Is(err, ErrUnknownCode) {
		t.Errorf("dropped code: %v", err)
	}
}

// A damaged users' file allows nobody and says why; it is not overwritten.
func TestDamagedFile(t *testing.T) {
	s, _, dir := newStore(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.json"), []byte(`[{"id": 7,`), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Allowed(7); ok || err == nil || !strings.Contains(err.Error(), "users.json") {
		t.Errorf("Allowed on a damaged file: %v, %v", ok, err)
	}
	if _, err := s.Code(8, 80, "Bob"); err == nil {
		t.Errorf("a change over a damaged file succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "users.json")); string(b) != `[{"id": 7,` {
		t.Errorf("the damaged file was rewritten: %s", b)
	}
}

// Two stores on one folder (the bot and the host) changing at once lose
// nothing.
func TestConcurrentChanges(t *testing.T) {
	a, c, dir := newStore(t)
	b := New(dir, c.Now, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			if _, err := s.Code(int64(i), 1, "u"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	reqs, err := readRequests(filepath.Join(dir, "requests.json"))
	if err != nil || len(reqs) != 20 {
		t.Errorf("%d requests kept of 20 (%v)", len(reqs), err)
	}
}

// Run as root (`docker exec` into the image) on a data directory of
// another user (the bot's), the store's files are that user's: the bot can
// still read and change them.
func TestRootWritesAsTheDataDirsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	data := t.TempDir()
	if err := os.Chown(data, 10001, 10001); err != nil {
		t.Fatal(err)
	}
	s := New(filepath.Join(data, "access"), nil, nil)
	req, err := s.Code(7, 70, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Allow(req.Code, 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", ".lock", "users.json", "requests.json"} {
		fi, err := os.Stat(filepath.Join(data, "access", name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 10001 || st.Gid != 10001 {
			t.Errorf("%q is %d:%d, want the data directory's 10001:10001", name, st.Uid, st.Gid)
		}
	}
}
