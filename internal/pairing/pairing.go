// Package pairing keeps the users an admin added to the bot, and the
// one-time codes strangers ask for access with.
//
// A stranger who writes to the bot is refused with a code (8 characters,
// valid for CodeTTL); an admin who is given the code adds them with /allow
// in a chat with the bot, or the operator with `volcanicbot allow` on the
// host. Both the running bot and that command use a Store on the same
// folder of the data directory: every change is made under an exclusive
// lock of the folder and written atomically, and the bot sees a change of
// the users' file at the next message of a user it does not know.
package pairing

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/store"
	"golang.org/x/sys/unix"
)

// Limits.
const (
	// CodeTTL is how long a code can be used.
	CodeTTL = time.Hour
	// CodeLen is a code's length, from codeAlphabet: 29^8, about 2^38.
	CodeLen = 8
	// MaxPending is the most codes waiting at once: past it a stranger is
	// told to try later (a flood of strangers does not grow the file).
	MaxPending = 64
	// keepEnded is how long a used or expired code is remembered, so that
	// /allow can say "already used" or "expired" rather than "unknown".
	keepEnded = 24 * time.Hour
	// maxName bounds a user's name as kept.
	maxName = 64
)

// codeAlphabet has no letters that read as others (0/O, 1/I/L, U/V).
const codeAlphabet = "ABCDEFGHJKMNPQRSTWXYZ23456789"

// Errors of Allow, Code and the files.
var (
	ErrUnknownCode = errors.New("no such code")
	ErrExpired     = errors.New("the code has expired")
	ErrUsed        = errors.New("the code was used already")
	ErrBusy        = errors.New("too many people are waiting for access")
)

// User is a user an admin added.
type User struct {
	ID   int64  `json:"id"`
	Name string `json:"name,omitempty"`
	// AddedBy is the admin's user id; 0: on the host (volcanicbot allow).
	AddedBy int64     `json:"added_by,omitempty"`
	AddedAt time.Time `json:"added_at"`
}

// Request is a stranger's code.
type Request struct {
	Code    string    `json:"code"`
	UserID  int64     `json:"user_id"`
	ChatID  int64     `json:"chat_id"` // where they asked: they are told there when added
	Name    string    `json:"name,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Used is when the code was used; UsedBy who used it (0: the host).
	Used   *time.Time `json:"used,omitempty"`
	UsedBy int64      `json:"used_by,omitempty"`
}

// Store is the pairing state in one folder: users.json, requests.json and
// the lock. New does no I/O; the folder is made by the first change.
type Store struct {
	dir  string
	now  func() time.Time
	rand io.Reader

	mu    sync.Mutex // the cache below, and one change at a time in this process
	users map[int64]bool
	stamp fileStamp // of users.json when users was read
}

// New is the store in dir. now and random may be nil (the clock,
// crypto/rand).
func New(dir string, now func() time.Time, random io.Reader) *Store {
	if now == nil {
		now = time.Now
	}
	if random == nil {
		random = rand.Reader
	}
	return &Store{dir: dir, now: now, rand: random}
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) usersPath() string    { return filepath.Join(s.dir, "users.json") }
func (s *Store) requestsPath() string { return filepath.Join(s.dir, "requests.json") }

// fileStamp tells a file's versions apart without reading it.
type fileStamp struct {
	exists bool
	ino    uint64
	size   int64
	mtime  time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	st := fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st, nil
}

// Allowed reports whether an admin added userID. The users' file is read
// again when it changed since the last call (the host's `volcanicbot
// allow` writes it while the bot runs). An unreadable file allows nobody
// and is the error.
func (s *Store) Allowed(userID int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := stampOf(s.usersPath())
	if err != nil {
		return false, err
	}
	if s.users == nil || st != s.stamp {
		users, err := readUsers(s.usersPath())
		if err != nil {
			s.users = nil
			return false, err
		}
		s.users = map[int64]bool{}
		for _, u := range users {
			s.users[u.ID] = true
		}
		s.stamp = st
	}
	return s.users[userID], nil
}

// Users are the users added, oldest first.
func (s *Store) Users() ([]User, error) {
	return readUsers(s.usersPath())
}

// Code is userID's code: the one it has while it is valid, or a new one.
// chatID is where they asked and name how they call themselves (kept for
// the admin's confirmation). ErrBusy when MaxPending codes wait.
func (s *Store) Code(userID, chatID int64, name string) (Request, error) {
	var out Request
	err := s.change(func(users []User, reqs []Request) ([]User, []Request, error) {
		now := s.now()
		for _, r := range reqs {
			if r.UserID == userID && r.Used == nil && now.Before(r.Expires) {
				out = r
				return users, reqs, nil
			}
		}
		pending := 0
		for _, r := range reqs {
			if r.Used == nil && now.Before(r.Expires) {
				pending++
			}
		}
		if pending >= MaxPending {
			return nil, nil, ErrBusy
		}
		code, err := s.newCode(reqs)
		if err != nil {
			return nil, nil, err
		}
		out = Request{Code: code, UserID: userID, ChatID: chatID, Name: cleanName(name), Created: now, Expires: now.Add(CodeTTL)}
		return users, append(reqs, out), nil
	})
	return out, err
}

// Allow uses code: its user is added (by the admin by; 0: the host) and
// returned with the request. ErrUnknownCode, ErrExpired or ErrUsed (with
// the request: who used it and when) otherwise.
func (s *Store) Allow(code string, by int64) (User, Request, error) {
	code = NormalizeCode(code)
	var user User
	var req Request
	err := s.change(func(users []User, reqs []Request) ([]User, []Request, error) {
		now := s.now()
		i := slices.IndexFunc(reqs, func(r Request) bool { return r.Code == code })
		if i < 0 {
			return nil, nil, ErrUnknownCode
		}
		req = reqs[i]
		switch {
		case req.Used != nil:
			return nil, nil, ErrUsed
		case !now.Before(req.Expires):
			return nil, nil, ErrExpired
		}
		reqs[i].Used, reqs[i].UsedBy = &now, by
		req = reqs[i]
		user = User{ID: req.UserID, Name: req.Name, AddedBy: by, AddedAt: now}
		if j := slices.IndexFunc(users, func(u User) bool { return u.ID == req.UserID }); j >= 0 {
			user = users[j] // added already (two codes, or by hand): kept as it was
			return users, reqs, nil
		}
		return append(users, user), reqs, nil
	})
	return user, req, err
}

// Revoke removes userID from the users added; it reports whether they
// were there.
func (s *Store) Revoke(userID int64) (bool, error) {
	found := false
	err := s.change(func(users []User, reqs []Request) ([]User, []Request, error) {
		n := len(users)
		users = slices.DeleteFunc(users, func(u User) bool { return u.ID == userID })
		found = len(users) != n
		return users, reqs, nil
	})
	return found, err
}

// change runs fn on the files' contents under the folder's lock and writes
// what it returns; requests long ended are dropped. An error of fn changes
// nothing.
func (s *Store) change(fn func([]User, []Request) ([]User, []Request, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	own, err := store.OwnerOf(filepath.Dir(s.dir)) // run as root, the files stay the bot's
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := own(s.dir); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := own(lock.Name()); err != nil {
		return err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", s.dir, err)
	}
	users, err := readUsers(s.usersPath())
	if err != nil {
		return err
	}
	reqs, err := readRequests(s.requestsPath())
	if err != nil {
		return err
	}
	now := s.now()
	reqs = slices.DeleteFunc(reqs, func(r Request) bool {
		ended := r.Expires
		if r.Used != nil {
			ended = *r.Used
		}
		return now.Sub(ended) > keepEnded
	})
	beforeUsers := slices.Clone(users)
	users, reqs, err = fn(users, reqs)
	if err != nil {
		return err
	}
	if err := writeJSON(s.requestsPath(), reqs, own); err != nil {
		return err
	}
	if !slices.Equal(beforeUsers, users) {
		if err := writeJSON(s.usersPath(), users, own); err != nil {
			return err
		}
		s.users = nil // read again
	}
	return nil
}

func (s *Store) newCode(reqs []Request) (string, error) {
	// Bytes past the last whole run of the alphabet are drawn again, so
	// that every character is as likely.
	limit := byte(256 / len(codeAlphabet) * len(codeAlphabet))
	for range 16 {
		code := make([]byte, 0, CodeLen)
		var b [2 * CodeLen]byte
		for len(code) < CodeLen {
			if _, err := io.ReadFull(s.rand, b[:]); err != nil {
				return "", err
			}
			for _, c := range b {
				if c < limit && len(code) < CodeLen {
					code = append(code, codeAlphabet[int(c)%len(codeAlphabet)])
				}
			}
		}
		if !slices.ContainsFunc(reqs, func(r Request) bool { return r.Code == string(code) }) {
			return string(code), nil
		}
	}
	return "", errors.New("no unused code found")
}

// NormalizeCode is code as the store keeps it: upper case, without spaces
// or dashes (a code read out or typed in groups of four).
func NormalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

// cleanName keeps a user's name short and on one line.
func cleanName(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > maxName {
		name = string(r[:maxName]) + "…"
	}
	return name
}

func readUsers(path string) ([]User, error) {
	var users []User
	return users, readJSON(path, &users)
}

func readRequests(path string) ([]Request, error) {
	var reqs []Request
	return reqs, readJSON(path, &reqs)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeJSON replaces path with v, atomically and synced, readable by the
// bot's user only (own gives the new file its owner).
func writeJSON(path string, v any, own func(string) error) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFile(path, append(b, '\n'), own)
}
