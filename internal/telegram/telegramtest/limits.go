package telegramtest

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// Limits are the flood limits the fake enforces on the calls that send or
// change a message (sendMessage, sendPhoto, sendDocument, sendMessageDraft,
// editMessageText, editMessageReplyMarkup), measured when each request
// arrives. A call that breaks one gets a 429 with parameters.retry_after
// (whole seconds, rounded up), and every such call to that chat is refused
// the same way until then, as Telegram does. A zero field is no limit.
type Limits struct {
	// ChatEvery is the least time between two such calls in one chat.
	ChatEvery time.Duration
	// GroupPerMinute is how many a group (a negative chat id) takes in
	// any minute.
	GroupPerMinute int
	// PerSecond is how many the fake takes in any second, in all chats.
	PerSecond int
}

// TelegramLimits are Telegram's documented limits, which New and
// NewInProcess enforce (https://core.telegram.org/bots/faq): one message
// a second in a chat, twenty a minute in a group, thirty a second in all.
var TelegramLimits = Limits{ChatEvery: time.Second, GroupPerMinute: 20, PerSecond: 30}

// NoLimits enforces nothing.
var NoLimits = Limits{}

// limited is the methods the limits count.
var limited = map[string]bool{
	"sendmessage": true, "sendphoto": true, "senddocument": true, "sendvoice": true, "sendmessagedraft": true,
	"editmessagetext": true, "editmessagereplymarkup": true, "editmessagecaption": true,
}

// limiter is the fake's record of the calls the limits count; guarded by
// Fake.mu.
type limiter struct {
	limits  Limits
	chats   map[int64]*chatCalls
	all     []time.Time // accepted calls of the last second
	tooMany map[int64]int
}

type chatCalls struct {
	last      time.Time
	minute    []time.Time // a group's accepted calls of the last minute
	bannedTil time.Time
}

func newLimiter(l Limits) *limiter {
	return &limiter{limits: l, chats: map[int64]*chatCalls{}, tooMany: map[int64]int{}}
}

// admit decides a counted call to chat arriving at t: nil and recorded
// when it is within the limits, else the 429 to answer.
func (l *limiter) admit(chat int64, t time.Time) *apiError {
	c := l.chats[chat]
	if c == nil {
		c = &chatCalls{}
		l.chats[chat] = c
	}
	if t.Before(c.bannedTil) { // still waiting out an earlier 429
		return l.refuse(chat, c.bannedTil.Sub(t))
	}
	var wait time.Duration
	if e := l.limits.ChatEvery; e > 0 && !c.last.IsZero() && t.Sub(c.last) < e {
		wait = max(wait, c.last.Add(e).Sub(t))
	}
	if n := l.limits.GroupPerMinute; n > 0 && chat < 0 {
		c.minute = since(c.minute, t.Add(-time.Minute))
		if len(c.minute) >= n {
			wait = max(wait, c.minute[len(c.minute)-n].Add(time.Minute).Sub(t))
		}
	}
	if n := l.limits.PerSecond; n > 0 {
		l.all = since(l.all, t.Add(-time.Second))
		if len(l.all) >= n {
			wait = max(wait, l.all[len(l.all)-n].Add(time.Second).Sub(t))
		}
	}
	if wait > 0 {
		e := l.refuse(chat, wait)
		c.bannedTil = t.Add(time.Duration(e.retryAfter) * time.Second)
		return e
	}
	c.last = t
	if chat < 0 {
		c.minute = append(c.minute, t)
	}
	l.all = append(l.all, t)
	return nil
}

// refuse is the 429 for a call to chat that must wait d.
func (l *limiter) refuse(chat int64, d time.Duration) *apiError {
	secs := int(math.Ceil(d.Seconds()))
	l.tooMany[chat]++
	return &apiError{status: http.StatusTooManyRequests, retryAfter: secs,
		description: fmt.Sprintf("Too Many Requests: retry after %d", secs)}
}

// since drops the times at or before cut (times are in order).
func since(ts []time.Time, cut time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	return append(ts[:0], ts[i:]...)
}

// checkLimits applies the limits to a request of method for chat (0: not
// a chat's), arriving at t.
func (f *Fake) checkLimits(method string, chat int64, t time.Time) *apiError {
	if chat == 0 || !limited[strings.ToLower(method)] {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.limiter.admit(chat, t)
}

// SetLimits replaces the limits the fake enforces from now on.
func (f *Fake) SetLimits(l Limits) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limiter.limits = l
}

// TooMany is how many calls to chat broke the limits (and were answered
// with a 429); chat 0: in all chats.
func (f *Fake) TooMany(chat int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if chat != 0 {
		return f.limiter.tooMany[chat]
	}
	n := 0
	for _, c := range f.limiter.tooMany {
		n += c
	}
	return n
}

// TooManyChats is how many chats got at least one 429 for breaking the
// limits, and the most one chat got.
func (f *Fake) TooManyChats() (chats, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.limiter.tooMany {
		chats++
		most = max(most, c)
	}
	return chats, most
}
