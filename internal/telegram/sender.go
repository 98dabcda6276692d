package telegram

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
)

// Limits are Telegram's flood limits, which the sender keeps under
// (https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this).
// A zero field takes its DefaultLimits value.
type Limits struct {
	// ChatEvery is the least time between two messages in one chat.
	ChatEvery time.Duration
	// GroupPerMinute is how many messages a group or channel gets in a
	// minute.
	GroupPerMinute int
	// PerSecond is how many messages the bot sends in a second, in all
	// chats together.
	PerSecond int
}

// DefaultLimits are the documented limits: about one message a second in
// a chat, twenty a minute in a group, thirty a second in all.
var DefaultLimits = Limits{ChatEvery: time.Second, GroupPerMinute: 20, PerSecond: 30}

func (l Limits) withDefaults() Limits {
	if l.ChatEvery <= 0 {
		l.ChatEvery = DefaultLimits.ChatEvery
	}
	if l.GroupPerMinute <= 0 {
		l.GroupPerMinute = DefaultLimits.GroupPerMinute
	}
	if l.PerSecond <= 0 {
		l.PerSecond = DefaultLimits.PerSecond
	}
	return l
}

// maxHolds is how many 429s one call waits out before it fails.
const maxHolds = 10

// Pace says whether a call counts against the flood limits.
type Pace uint8

const (
	// Paced calls send or change a message: sendMessage, edits, uploads,
	// drafts. They keep their order.
	Paced Pace = iota
	// Unpaced calls change no message (typing, answers to button presses,
	// deletions, file lookups). They wait out a 429 like every call, but
	// may go ahead of a paced call that waits for its turn.
	Unpaced
)

// SendStats count what the sender did since the bot was made.
type SendStats struct {
	// Paced is how many paced calls were made (retries included).
	Paced int64
	// Unpaced is how many other calls were made.
	Unpaced int64
	// TooMany is how many calls Telegram answered with a 429.
	TooMany int64
	// Coalesced is how many queued updates of a live message were
	// replaced by a newer one before they were sent.
	Coalesced int64
}

// sender is the one way out to Telegram for everything addressed to a
// chat: each chat has a queue, run in order by a worker goroutine of its
// own while it holds calls. A 429 holds every call of that chat until its
// retry_after has passed; paced calls keep under Limits — one per
// ChatEvery in a chat, GroupPerMinute in a group, PerSecond in all; a
// queued call with the key of one still waiting replaces it (the newest
// text of a live message wins). 5xx and network errors are retried by the
// retrier, in the worker, so the chat's order holds.
//
// A call takes its slot in each limit when it starts and gives it back
// one period after its answer arrived: so however late a request reaches
// Telegram, no two arrive closer than the limits allow.
type sender struct {
	rt     *retrier
	limits Limits
	log    *slog.Logger
	global *gate

	mu    sync.Mutex
	chats map[int64]*chatQueue
	stats SendStats
	wg    sync.WaitGroup // the chat workers
}

func newSender(rt *retrier, limits Limits, log *slog.Logger) *sender {
	limits = limits.withDefaults()
	return &sender{
		rt: rt, limits: limits, log: log,
		global: newGate(limits.PerSecond, time.Second),
		chats:  map[int64]*chatQueue{},
	}
}

// op is one queued call.
type op struct {
	ctx    context.Context
	method string
	pace   Pace
	key    string // "": never replaced
	fn     func(context.Context) error
	done   []chan error // every caller waiting for it (replaced ones too)
	holds  int          // 429s waited out
	tries  int          // attempts in all, for 5xx and network errors
	try    int          // attempts made
	// notBefore is when a call that failed may be tried again.
	notBefore time.Time
}

// chatQueue is one chat's calls and limits; guarded by sender.mu.
type chatQueue struct {
	id        int64
	ops       []*op
	wake      chan struct{}
	holdUntil time.Time
	chat      window // ChatEvery
	group     window // GroupPerMinute, groups only
	isGroup   bool
	running   bool // a worker runs the queue
}

// do runs fn as chat's call and returns its outcome, or ctx's error when
// ctx ends first (the call is then dropped if it has not started).
func (s *sender) do(ctx context.Context, chatID int64, method string, p Pace, fn func(context.Context) error) error {
	return s.wait(ctx, method, s.submitTries(ctx, chatID, method, p, "", s.rt.tries, fn))
}

// doOnce is do without retries on 5xx and network errors (the typing
// action: the next one renews it).
func (s *sender) doOnce(ctx context.Context, chatID int64, method string, p Pace, fn func(context.Context) error) error {
	return s.wait(ctx, method, s.submitTries(ctx, chatID, method, p, "", 1, fn))
}

// send is do for methods with a result.
func send[T any](ctx context.Context, s *sender, chatID int64, method string, p Pace, fn func(context.Context) (T, error)) (T, error) {
	var out T
	err := s.do(ctx, chatID, method, p, func(ctx context.Context) error {
		v, err := fn(ctx)
		if err == nil {
			out = v
		}
		return err
	})
	if err != nil {
		var zero T // out may still be written by a call ctx gave up on
		return zero, err
	}
	return out, nil
}

// wait waits for a submitted call's outcome.
func (s *sender) wait(ctx context.Context, method string, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &callError{method: method, msg: ctx.Err().Error(), err: ctx.Err()}
	}
}

// submit queues fn as chat's call and returns a channel that gets its
// outcome. A call with a key replaces a queued call of the same key (which
// then reports this one's outcome).
func (s *sender) submit(ctx context.Context, chatID int64, method string, p Pace, key string, fn func(context.Context) error) <-chan error {
	return s.submitTries(ctx, chatID, method, p, key, s.rt.tries, fn)
}

func (s *sender) submitTries(ctx context.Context, chatID int64, method string, p Pace, key string, tries int, fn func(context.Context) error) <-chan error {
	done := make(chan error, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.chats[chatID]
	if !ok {
		if len(s.chats) >= sweepAt {
			s.sweep(time.Now())
		}
		q = &chatQueue{
			id: chatID, wake: make(chan struct{}, 1), isGroup: chatID < 0,
			chat:  window{n: 1, period: s.limits.ChatEvery},
			group: window{n: s.limits.GroupPerMinute, period: time.Minute},
		}
		s.chats[chatID] = q
	}
	if !q.running {
		q.running = true
		s.wg.Add(1)
		go s.work(q)
	}
	if key != "" {
		for _, o := range q.ops {
			if o.key == key {
				o.ctx, o.method, o.pace, o.fn, o.tries = ctx, method, p, fn, tries
				o.done = append(o.done, done)
				s.stats.Coalesced++
				return done
			}
		}
	}
	q.ops = append(q.ops, &op{ctx: ctx, method: method, pace: p, key: key, fn: fn, done: []chan error{done}, tries: tries})
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return done
}

// sweepAt is how many chats the sender keeps before it forgets those
// whose limits have all expired.
const sweepAt = 4096

// sweep forgets the idle chats whose hold and slots have expired.
// sender.mu is held.
func (s *sender) sweep(now time.Time) {
	for id, q := range s.chats {
		if q.running || now.Before(q.holdUntil) {
			continue
		}
		q.chat.prune(now)
		q.group.prune(now)
		if len(q.chat.frees) == 0 && len(q.group.frees) == 0 {
			delete(s.chats, id)
		}
	}
}

// Stats returns the counts so far.
func (s *sender) Stats() SendStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// close waits for the chat workers, which end once their queues are
// empty (a call whose context ended is dropped).
func (s *sender) close() {
	s.wg.Wait()
	s.global.stop()
}

// work runs chat q's calls until its queue is empty.
func (s *sender) work(q *chatQueue) {
	defer s.wg.Done()
	var tk *ticket // a global slot asked for, for the first paced call
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		q.dropEnded()
		if len(q.ops) == 0 {
			if tk != nil {
				s.global.cancel(tk)
			}
			q.running = false // its limits stay, for the chat's next call
			s.mu.Unlock()
			return
		}
		now := time.Now()
		o, wait := q.pick(now, s.global, &tk)
		if o == nil {
			if tk != nil && !q.hasPaced() {
				s.global.cancel(tk) // its call is gone
				tk = nil
			}
			s.mu.Unlock()
			awaitTurn(q, tk, timer, now, wait)
			continue
		}
		s.starting(q, o)
		s.mu.Unlock()
		err := o.fn(o.ctx)
		o.try++
		s.finished(q, o, err, &tk)
	}
}

// awaitTurn waits until q is woken, tk's global slot (when not granted
// yet) is granted, or wait (when set) comes; timer is the worker's, left
// stopped and drained.
func awaitTurn(q *chatQueue, tk *ticket, timer *time.Timer, now, wait time.Time) {
	var granted <-chan struct{}
	if tk != nil && !tk.isGranted() {
		granted = tk.ready
	}
	var due <-chan time.Time
	if !wait.IsZero() {
		timer.Reset(wait.Sub(now))
		due = timer.C
	}
	select {
	case <-q.wake:
	case <-granted:
	case <-due:
	}
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
}

// starting counts o's call, which is about to be made, and takes its
// chat's (and group's) slot when it is paced. sender.mu is held.
func (s *sender) starting(q *chatQueue, o *op) {
	if o.pace == Paced {
		s.stats.Paced++
		q.chat.start()
		if q.isGroup {
			q.group.start()
		}
	} else {
		s.stats.Unpaced++
	}
}

// finished settles o's call, which returned err: it frees the slots a
// paced call took, puts o back at the head of q when it is retried, and
// otherwise answers its callers.
func (s *sender) finished(q *chatQueue, o *op, err error, tk **ticket) {
	s.mu.Lock()
	end := time.Now()
	if o.pace == Paced {
		q.chat.finish(end)
		if q.isGroup {
			q.group.finish(end)
		}
		s.global.finish(end)
	}
	if err != nil && s.retry(q, o, err, end, tk) {
		q.ops = append([]*op{o}, q.ops...)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if err != nil {
		err = &callError{method: o.method, msg: s.rt.scrub(err.Error()), err: err}
	}
	for _, d := range o.done {
		d <- err
	}
}

// retry decides whether o, which just failed with err, goes back to the
// head of its queue: after a 429 the whole chat is held until retry_after
// has passed (at most maxHolds times); after a 5xx or a network error o
// waits its backoff (the retrier's policy, o.tries in all). sender.mu is
// held.
func (s *sender) retry(q *chatQueue, o *op, err error, end time.Time, tk **ticket) bool {
	if o.ctx.Err() != nil {
		return false
	}
	var tooMany *tgbot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		s.stats.TooMany++
		wait := time.Duration(max(tooMany.RetryAfter, 1)) * time.Second
		if until := end.Add(wait); until.After(q.holdUntil) {
			q.holdUntil = until
		}
		if *tk != nil { // no global slot is kept through the hold
			s.global.cancel(*tk)
			*tk = nil
		}
		if o.holds >= maxHolds {
			return false
		}
		o.holds++
		s.log.Debug("telegram asked the chat to wait", "chat", q.id, "method", o.method, "retry_after", wait)
		return true
	}
	wait, again := s.rt.backoff(err, o.try)
	if !again || o.try >= o.tries {
		return false
	}
	s.log.Debug("telegram call failed; retrying", "method", o.method, "chat", q.id,
		"try", o.try, "wait", wait, "err", s.rt.scrub(err.Error()))
	o.notBefore = end.Add(wait)
	return true
}

// pick returns the call to run now, or nil and when to look again (zero:
// when woken). Paced calls go in order; an unpaced call may go ahead of a
// paced one that waits for its limits. *tk is the global slot asked for on
// behalf of the first paced call; pick consumes it when it picks that
// call. sender.mu is held.
func (q *chatQueue) pick(now time.Time, g *gate, tk **ticket) (*op, time.Time) {
	if now.Before(q.holdUntil) {
		return nil, q.holdUntil
	}
	var wait time.Time
	later := func(at time.Time) {
		if !at.IsZero() && (wait.IsZero() || at.Before(wait)) {
			wait = at
		}
	}
	take := func(i int) *op {
		o := q.ops[i]
		q.ops = append(q.ops[:i], q.ops[i+1:]...)
		return o
	}
	pacedSeen := false
	for i, o := range q.ops {
		if now.Before(o.notBefore) {
			later(o.notBefore)
			pacedSeen = pacedSeen || o.pace == Paced
			continue
		}
		if o.pace == Unpaced {
			return take(i), time.Time{}
		}
		if pacedSeen {
			continue
		}
		pacedSeen = true
		at, ok := q.chat.readyAt(now)
		if ok && q.isGroup {
			at, ok = q.group.readyAt(now)
		}
		if !ok {
			later(at)
			continue
		}
		if *tk == nil {
			*tk = g.request()
		}
		if (*tk).isGranted() {
			*tk = nil // the slot is this call's now
			return take(i), time.Time{}
		}
	}
	return nil, wait
}

func (q *chatQueue) hasPaced() bool {
	for _, o := range q.ops {
		if o.pace == Paced {
			return true
		}
	}
	return false
}

// dropEnded answers and removes the calls whose context ended while they
// waited.
func (q *chatQueue) dropEnded() {
	kept := q.ops[:0]
	for _, o := range q.ops {
		if err := o.ctx.Err(); err != nil {
			for _, d := range o.done {
				d <- &callError{method: o.method, msg: err.Error(), err: err}
			}
			continue
		}
		kept = append(kept, o)
	}
	clear(q.ops[len(kept):])
	q.ops = kept
}
