package spend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Reserve is asked before every model request made for chat on behalf of
// user (0: none known) to model ("": the default), with an estimate of
// the most the request can cost: prompt tokens and an answer of up to
// answer tokens. It holds them — and what they cost at the model's price,
// none of the prompt cached — against the chat's and the user's
// allowances as if spent, until spent is called — once, with what the
// request cost: its Usage, also when it failed (llm.Model says what a
// failed request cost; zero, when it never reached the model, is no
// call). So requests made at once cannot all pass on the same tokens
// left: a request goes while what is spent and held is under the
// allowance, and what is spent exceeds an allowance by one request at
// most (as far as the request costs no more than it reserved).
//
// While the rest of an allowance is held by requests in flight, Reserve
// waits for them (or for ctx: err is then ctx's error). When an allowance
// is used up, spent is nil and notice is what to tell the chat — once a
// day for the chat's allowances and once for the user's, "" after that.
// Without allowances (or lifted for the chat) every request goes at once.
func (l *Ledger) Reserve(ctx context.Context, chat, user int64, model string, prompt, answer int64) (spent func(llm.Usage), notice string, err error) {
	model = l.modelOf(model)
	if !l.limited() {
		return l.spender(chat, user, model, hold{}), "", nil
	}
	h := hold{tokens: max(prompt+answer, 1), usd: l.o.Prices[model].estimate(prompt, answer)}
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
			l.held[chat] += h.tokens
			l.heldUSD[chat] += h.usd
			if user != 0 {
				l.heldUsers[user] += h.tokens
				l.heldUsersUSD[user] += h.usd
			}
			l.mu.Unlock()
			return l.spender(chat, user, model, h), "", nil
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-wait:
		}
	}
}

// limited reports whether any allowance is set.
func (l *Ledger) limited() bool {
	return l.o.PerChat > 0 || l.o.PerUser > 0 || l.o.PerChatUSD > 0 || l.o.PerUserUSD > 0
}

// hold is what a request in flight holds of the allowances.
type hold struct {
	tokens int64
	usd    float64
}

// admitLocked decides a request of chat for user now: used (with the
// notice, once) when an allowance is used up; else a channel to wait on
// when the rest of one is held by requests in flight; else neither: the
// request may go.
func (l *Ledger) admitLocked(now time.Time, chat, user int64) (wait <-chan struct{}, notice string, used bool) {
	if l.lifted[chat] {
		return nil, "", false
	}
	who, text, reached := l.reachedLocked(chat, user)
	if !reached {
		if l.heldUpLocked(chat, user) {
			return l.freed, "", false
		}
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
	l.o.Logger.Info("daily allowance reached", "chat", chat, "user", who.user)
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return nil, fmt.Sprintf("%s I can answer again from 00:00 UTC (in %s); until then I make no model request here. "+
		"An admin can lift it for today with /allow_more %d.", text, untilText(next.Sub(now)), chat), true
}

// reachedLocked reports whether an allowance of chat or user is used up
// today, whose (user 0: the chat's), and how to say which.
func (l *Ledger) reachedLocked(chat, user int64) (toldKey, string, bool) {
	o := l.o
	switch {
	case o.PerChat > 0 && l.chats[chat].Tokens() >= o.PerChat:
		return toldKey{chat, 0}, fmt.Sprintf("This chat has used today's allowance of %s tokens.", Number(o.PerChat)), true
	case o.PerChatUSD > 0 && l.chatsUSD[chat] >= o.PerChatUSD:
		return toldKey{chat, 0}, fmt.Sprintf("This chat has used today's allowance of %s.", Dollars(o.PerChatUSD)), true
	case user == 0:
		return toldKey{}, "", false
	case o.PerUser > 0 && l.users[user].Tokens() >= o.PerUser:
		return toldKey{chat, user}, fmt.Sprintf("You have used today's allowance of %s tokens.", Number(o.PerUser)), true
	case o.PerUserUSD > 0 && l.usersUSD[user] >= o.PerUserUSD:
		return toldKey{chat, user}, fmt.Sprintf("You have used today's allowance of %s.", Dollars(o.PerUserUSD)), true
	}
	return toldKey{}, "", false
}

// heldUpLocked reports whether what is spent and held by requests in
// flight reaches an allowance of chat or user: a request waits for them.
func (l *Ledger) heldUpLocked(chat, user int64) bool {
	o := l.o
	if o.PerChat > 0 && l.chats[chat].Tokens()+l.held[chat] >= o.PerChat ||
		o.PerChatUSD > 0 && l.chatsUSD[chat]+l.heldUSD[chat] >= o.PerChatUSD {
		return true
	}
	return user != 0 && (o.PerUser > 0 && l.users[user].Tokens()+l.heldUsers[user] >= o.PerUser ||
		o.PerUserUSD > 0 && l.usersUSD[user]+l.heldUsersUSD[user] >= o.PerUserUSD)
}

// spender is the spent of a request to model that holds h for chat and
// user: the first call releases it and records the usage; later calls do
// nothing.
func (l *Ledger) spender(chat, user int64, model string, h hold) func(llm.Usage) {
	var once sync.Once
	return func(u llm.Usage) {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.recordLocked(chat, user, model, u)
			if h == (hold{}) {
				return
			}
			release(l.held, chat, h.tokens)
			releaseUSD(l.heldUSD, chat, h.usd)
			if user != 0 {
				release(l.heldUsers, user, h.tokens)
				releaseUSD(l.heldUsersUSD, user, h.usd)
			}
			l.wakeLocked()
		})
	}
}

func release(held map[int64]int64, key, tokens int64) {
	if held[key] -= tokens; held[key] <= 0 {
		delete(held, key)
	}
}

// releaseUSD frees usd of key's hold; a rest under a millionth of a
// cent (the sums' rounding) is none.
func releaseUSD(held map[int64]float64, key int64, usd float64) {
	if held[key] -= usd; held[key] <= 1e-8 {
		delete(held, key)
	}
}

// wakeLocked lets the requests waiting in Reserve look again.
func (l *Ledger) wakeLocked() {
	close(l.freed)
	l.freed = make(chan struct{})
}
