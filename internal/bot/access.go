package bot

import (
	"fmt"
	"sync"
	"time"
)

// refusalEvery is how often a stranger is told they are not allowed.
const refusalEvery = 10 * time.Minute

// access is the default-deny allowlist of user ids, and the limit on
// refusals sent to strangers.
type access struct {
	allowed map[int64]bool
	admins  map[int64]bool // allowed too

	mu      sync.Mutex
	refused map[int64]time.Time // stranger → last refusal
}

func newAccess(users, admins []int64) *access {
	a := &access{allowed: map[int64]bool{}, admins: map[int64]bool{}, refused: map[int64]time.Time{}}
	for _, id := range users {
		a.allowed[id] = true
	}
	for _, id := range admins {
		a.allowed[id] = true
		a.admins[id] = true
	}
	return a
}

func (a *access) allows(userID int64) bool { return a.allowed[userID] }

// isAdmin reports whether userID is one of TELEGRAM_ADMINS.
func (a *access) isAdmin(userID int64) bool { return a.admins[userID] }
func (a *access) empty() bool               { return len(a.allowed) == 0 }
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
