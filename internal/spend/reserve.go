package spend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Reserve is asked before every model request made for chat on behalf of
// user (0: none known), with tokens, an estimate of the most the request
// can cost (its prompt and the longest answer it may write). It holds
// them against the chat's and the user's allowances as if spent, until
// spent is called — once, with what the request cost: its Usage, also
// when it failed (llm.Model says what a failed request cost; zero, when
// it never reached the model, is no call). So requests made at once
// cannot all pass on the same tokens left: a request goes while what is
// spent and held is under the allowance, and what is spent exceeds an
// allowance by one request at most (as far as the request costs no more
// than it reserved).
//
// While the rest of an allowance is held by requests in flight, Reserve
// waits for them (or for ctx: err is then ctx's error). When an allowance
// is used up, spent is nil and notice is what to tell the chat — once a
// day for each allowance used up, "" after that. Without allowances (or
// lifted for the chat) every request goes at once.
func (l *Ledger) Reserve(ctx context.Context, chat, user, tokens int64) (spent func(llm.Usage), notice string, err error) {
	if l.o.PerChat <= 0 && l.o.PerUser <= 0 {
		return l.spender(chat, user, 0), "", nil
	}
	tokens = max(tokens, 1)
	for {
		now := l.o.Now().UTC()
		l.mu.Lock()
		if err := l.rollLocked(now); err != nil {
			l.o.Logger.Warn("usage: the month's record is not read", "err", err)
		}
		wait, notice, used := l.admitLocked(now, chat, user)
		switch {
		case used:
			l.mu.Unlock()
			return nil, notice, nil
		case wait == nil:
			l.held[chat] += tokens
			if user != 0 {
				l.heldUsers[user] += tokens
			}
			l.mu.Unlock()
			return l.spender(chat, user, tokens), "", nil
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-wait:
		}
	}
}

// admitLocked decides a request of chat for user now: used (with the
// notice, once) when an allowance is used up; else a channel to wait on
// when the rest of one is held by requests in flight; else neither: the
// request may go.
func (l *Ledger) admitLocked(now time.Time, chat, user int64) (wait <-chan struct{}, notice string, used bool) {
	if l.lifted[chat] {
		return nil, "", false
	}
	chatSpent, userSpent := l.chats[chat].Tokens(), l.users[user].Tokens()
	var who toldKey
	var text string
	switch {
	case l.o.PerChat > 0 && chatSpent >= l.o.PerChat:
		who = toldKey{chat, 0}
		text = fmt.Sprintf("This chat has used today's allowance of %s tokens.", Number(l.o.PerChat))
	case l.o.PerUser > 0 && user != 0 && userSpent >= l.o.PerUser:
		who = toldKey{chat, user}
		text = fmt.Sprintf("You have used today's allowance of %s tokens.", Number(l.o.PerUser))
	case l.o.PerChat > 0 && chatSpent+l.held[chat] >= l.o.PerChat,
		l.o.PerUser > 0 && user != 0 && userSpent+l.heldUsers[user] >= l.o.PerUser:
		return l.freed, "", false
	default:
		return nil, "", false
	}
	if l.told[who] {
		return nil, "", true
	}
	l.told[who] = true
	if who.user == 0 {
		l.stats.ReachedChat++
	} else {
		l.stats.ReachedUser++
	}
	l.appendLocked(line{Told: who.chat, ToldUser: who.user})
	l.o.Logger.Info("daily token allowance reached", "chat", chat, "user", who.user)
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return nil, fmt.Sprintf("%s I can answer again from 00:00 UTC (in %s); until then I make no model request here. "+
		"An admin can lift it for today with /allow_more %d.", text, untilText(next.Sub(now)), chat), true
}

// spender is the spent of a request that holds tokens for chat and user:
// the first call releases them and records the usage; later calls do
// nothing.
func (l *Ledger) spender(chat, user, tokens int64) func(llm.Usage) {
	var once sync.Once
	return func(u llm.Usage) {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.recordLocked(chat, user, u)
			if tokens > 0 {
				release(l.held, chat, tokens)
				if user != 0 {
					release(l.heldUsers, user, tokens)
				}
				l.wakeLocked()
			}
		})
	}
}

func release(held map[int64]int64, key, tokens int64) {
	if held[key] -= tokens; held[key] <= 0 {
		delete(held, key)
	}
}

// wakeLocked lets the requests waiting in Reserve look again.
func (l *Ledger) wakeLocked() {
	close(l.freed)
	l.freed = make(chan struct{})
}
