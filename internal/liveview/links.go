package liveview

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// secretBytes is the entropy of a link's token and of an in-page session
// secret: 256 bits, far past guessing at any rate limit.
const secretBytes = 32

// newSecret is a URL-safe random secret.
func newSecret() string {
	b := make([]byte, secretBytes)
	rand.Read(b) // never fails (crypto/rand's doc)
	return base64.RawURLEncoding.EncodeToString(b)
}

// digest is what the tables keep of a secret: its SHA-256, so a lookup
// compares hashes (whose timing says nothing of the secret) and the
// secrets themselves are in no map.
type digest [sha256.Size]byte

func digestOf(secret string) digest { return sha256.Sum256([]byte(secret)) }

// links are the live hand-offs' single-use tokens and the page sessions
// they opened. A token is spent when its page is served: the page then
// carries a session secret of its own, sent in a header (never in a URL)
// with every request, and dies with the hand-off.
type links struct {
	mu       sync.Mutex
	tokens   map[digest]*view // unspent links
	sessions map[digest]*view // opened pages
}

func newLinks() *links {
	return &links{tokens: map[digest]*view{}, sessions: map[digest]*view{}}
}

// add gives v a fresh token, and returns it.
func (l *links) add(v *view) string {
	tok := newSecret()
	l.mu.Lock()
	defer l.mu.Unlock()
	d := digestOf(tok)
	v.token = d
	l.tokens[d] = v
	return tok
}

// spend takes token's view off the table and gives it a session secret,
// once: a second call, a token never issued, or one whose hand-off ended or
// expired (now at or past its deadline) gets nil.
func (l *links) spend(token string, now time.Time) (*view, string) {
	d := digestOf(token)
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.tokens[d]
	if !ok || subtle.ConstantTimeCompare(v.token[:], d[:]) != 1 {
		return nil, ""
	}
	delete(l.tokens, d)
	if v.ended() || !now.Before(v.deadline) {
		return nil, ""
	}
	secret := newSecret()
	sd := digestOf(secret)
	v.session = sd
	l.sessions[sd] = v
	return v, secret
}

// session is the view of an opened page's secret, nil when there is
// none or its hand-off ended.
func (l *links) session(secret string, now time.Time) *view {
	if secret == "" {
		return nil
	}
	d := digestOf(secret)
	l.mu.Lock()
	v, ok := l.sessions[d]
	l.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare(v.session[:], d[:]) != 1 || v.ended() || !now.Before(v.deadline) {
		return nil
	}
	return v
}

// drop forgets v's token and session: its links get nothing from now on.
func (l *links) drop(v *view) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.tokens, v.token)
	delete(l.sessions, v.session)
}

// count is how many tokens and sessions are held, for tests.
func (l *links) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tokens) + len(l.sessions)
}

// dropSession forgets v's page session (its token is spent already).
func (l *links) dropSession(v *view) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sessions, v.session)
}
