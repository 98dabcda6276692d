package bot

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/pairing"
)

// refusalEvery is how often a stranger is told they are not allowed.
const refusalEvery = 10 * time.Minute

// access is the default-deny allowlist of user ids — the operator's lists
// and the users an admin added (pairing) —, and the limit on refusals sent
// to strangers.
type access struct {
	allowed map[int64]bool
	admins  map[int64]bool // allowed too
	added   *pairing.Store // nil: none
	log     *slog.Logger   // for an unreadable store
	scrub   func(string) string

	mu        sync.Mutex
	refused   map[int64]time.Time // stranger → last refusal
	loggedErr time.Time           // the store's last error logged
}

func newAccess(users, admins []int64) *access {
	a := &access{allowed: map[int64]bool{}, admins: map[int64]bool{}, refused: map[int64]time.Time{},
		log: slog.New(slog.DiscardHandler), scrub: func(s string) string { return s }}
	for _, id := range users {
		a.allowed[id] = true
	}
	for _, id := range admins {
		a.allowed[id] = true
		a.admins[id] = true
	}
	return a
}

// allows reports whether userID may use the bot: listed, or added by an
// admin. An unreadable store of added users allows nobody it would have
// allowed, and is logged (at most once a minute).
func (a *access) allows(userID int64) bool {
	if a.allowed[userID] {
		return true
	}
	if a.added == nil {
		return false
	}
	ok, err := a.added.Allowed(userID)
	if err != nil {
		a.mu.Lock()
		due := time.Since(a.loggedErr) >= time.Minute
		if due {
			a.loggedErr = time.Now()
		}
		a.mu.Unlock()
		if due {
			a.log.Error("the users added by admins cannot be read: only the listed users are allowed", "err", a.scrub(err.Error()))
		}
	}
	return ok
}

// listed reports whether userID is in TELEGRAM_ALLOWED_USERS or
// TELEGRAM_ADMINS.
func (a *access) listed(userID int64) bool { return a.allowed[userID] }

// isAdmin reports whether userID is one of TELEGRAM_ADMINS.
func (a *access) isAdmin(userID int64) bool { return a.admins[userID] }
func (a *access) empty() bool               { return len(a.allowed) == 0 && a.added == nil }
func (a *access) count() int                { return len(a.allowed) }

// shouldRefuse reports whether the stranger is due a refusal (at most one
// every refusalEvery), and records it.
func (a *access) shouldRefuse(userID int64) bool {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := a.refused[userID]; ok && now.Sub(last) < refusalEvery {
		return false
	}
	if len(a.refused) >= 4096 { // forget the old ones
		for id, t := range a.refused {
			if now.Sub(t) >= refusalEvery {
				delete(a.refused, id)
			}
		}
	}
	a.refused[userID] = now
	return true
}

func refusalText(userID int64) string {
	return fmt.Sprintf("Sorry, this bot is private. Your Telegram user id is %d; the operator can add it to TELEGRAM_ALLOWED_USERS.", userID)
}
