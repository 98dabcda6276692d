// Package spend keeps what the model costs — input, cached and output
// tokens per chat, per user and per model per UTC day, and their price in
// dollars — in the data directory, and enforces the daily spend
// allowances in tokens (LLM_DAILY_TOKENS_PER_CHAT,
// LLM_DAILY_TOKENS_PER_USER) and in dollars (LLM_DAILY_USD_PER_CHAT,
// LLM_DAILY_USD_PER_USER): once a chat or a user has used theirs, no
// model request is made for them until the next UTC day, unless an admin
// lifts it for the day (/allow-more). Every request reserves its tokens,
// and what they may cost at its model's price, before it is made
// (Reserve), so requests made at once cannot all pass on the same tokens
// left: what is spent exceeds an allowance by one request at most. A request that ended early counts what it cost all
// the same, estimated (llm.Usage.Estimated), and says so.
//
// The record is a journal, one file a day (usage/2006-01-02.jsonl), one
// JSON line per model call (with its model: a line without one, written
// before models were chosen per chat, is the default model's), lift or
// notice, appended as they happen: so a
// restart loses nothing that was written, and a line cut by a crash is
// skipped (and cut off before the next line is appended: store.Journal).
// Today's totals and this month's per chat are kept in memory,
// read back from the month's files by Load. Nothing reads further back
// than the current UTC month (/usage's longest window; the allowances are
// daily): Maintain deletes the files of earlier months and compacts the
// earlier days of this one to a line per chat and user.
package spend

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// Counts are tokens of model calls. Input includes Cached, as the
// providers count them.
type Counts struct {
	Input  int64 `json:"in,omitempty"`
	Cached int64 `json:"cached,omitempty"`
	Output int64 `json:"out,omitempty"`
	// Estimated is how many of Input and Output were counted by the bot
	// (llm.Usage.Estimated): requests that ended early, before the
	// provider said what they cost.
	Estimated int64 `json:"est,omitempty"`
	// Audio is the seconds of voice notes transcribed (a line of its own:
	// no tokens, no model call).
	Audio int64 `json:"audio_s,omitempty"`
	Calls int64 `json:"-"` // a journal line's (line.Calls)
}

// Tokens are what the allowance counts: input (cached included) and
// output.
func (c Counts) Tokens() int64 { return c.Input + c.Output }

func (c *Counts) add(o Counts) {
	c.Input += o.Input
	c.Cached += o.Cached
	c.Output += o.Output
	c.Estimated += o.Estimated
	c.Audio += o.Audio
	c.Calls += o.Calls
}

// Options configure a Ledger.
type Options struct {
	// Dir holds the journal (VOLCANIC_DATA_DIR/usage).
	Dir string
	// PerChat and PerUser are the daily allowances in tokens; 0: none.
	PerChat, PerUser int64
	// PerChatUSD and PerUserUSD are the daily allowances in dollars, at
	// Prices; 0: none. A model without a price costs nothing against
	// them (the configuration refuses that).
	PerChatUSD, PerUserUSD float64
	// Prices are what each model's tokens cost (LLM_PRICES, or
	// LLM_PRICE_*_PER_MTOK for the default model); a model without one:
	// unknown, no cost shown.
	Prices map[string]Price
	// DefaultModel is the model of the journal's lines that name none
	// (written before the model was recorded) and of calls recorded
	// without one.
	DefaultModel string
	// Now defaults to time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Ledger records usage and decides the allowance. It is safe for
// concurrent use. Make it with New and Load it before use.
type Ledger struct {
	o Options

	mu                 sync.Mutex
	day                string // the UTC day the maps are of, "2006-01-02"
	chats              map[int64]Counts
	users              map[int64]Counts
	chatsUSD, usersUSD map[int64]float64 // today's cost, at Prices
	lifted             map[int64]bool    // chats an admin lifted the allowance of, today
	told               map[toldKey]bool
	month              map[string]map[chatModel]Counts // this month: day → chat and model → counts
	journal            *store.Journal                  // today's, open for appending

	maintained string            // the UTC day Maintain last pruned and compacted on
	stats      Stats             // since New, for /metrics
	models     map[string]Counts // since New, by model, for /metrics

	// held are the tokens Reserve holds for requests in flight, by chat
	// and by user, and heldUSD what they may cost; freed is closed (and
	// replaced) when some are released or a lift may let a waiting
	// request go.
	held                  map[int64]int64
	heldUsers             map[int64]int64
	heldUSD, heldUsersUSD map[int64]float64
	freed                 chan struct{}
}

// chatModel keys the month's counts: a chat's calls of a model.
type chatModel struct {
	chat  int64
	model string
}

// toldKey is who was told that the allowance is used: a chat (user 0)
// for its own allowance, a user in a chat for theirs.
type toldKey struct{ chat, user int64 }

// line is one journal entry: a model call (chat, user, counts), a lift
// (Lift: the chat, By: the admin) or a notice sent (Told). A compacted
// day has a line per chat and user with the sum of their calls, and how
// many (Calls; absent: one call).
type line struct {
	Chat  int64  `json:"chat,omitempty"`
	User  int64  `json:"user,omitempty"`
	Model string `json:"model,omitempty"`
	Counts
	Calls    int64 `json:"calls,omitempty"`
	Lift     int64 `json:"lift,omitempty"`
	By       int64 `json:"by,omitempty"`
	Told     int64 `json:"told,omitempty"`
	ToldUser int64 `json:"told_user,omitempty"`
}

// New returns a Ledger; it does no I/O.
func New(o Options) *Ledger {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Ledger{o: o, held: map[int64]int64{}, heldUsers: map[int64]int64{},
		heldUSD: map[int64]float64{}, heldUsersUSD: map[int64]float64{}, models: map[string]Counts{}, freed: make(chan struct{})}
}

const (
	dayLayout = "2006-01-02"
	// maxUsageLine bounds a journal line read back (a line is ~100 bytes):
	// a longer one is skipped unread.
	maxUsageLine = 1 << 20
)

// Load reads this month's journal: today's totals per chat and user, the
// lifts and notices of today, and the month's totals per chat. A missing
// folder is an empty record; a line it cannot read is skipped with a
// warning.
func (l *Ledger) Load() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rollLocked(l.o.Now().UTC())
}

// rollLocked makes the maps those of now's day (and month), reading the
// month's files when the month is new to it.
func (l *Ledger) rollLocked(now time.Time) error {
	day := now.Format(dayLayout)
	if day == l.day {
		return nil
	}
	if l.journal != nil {
		_ = l.journal.Close()
		l.journal = nil
	}
	sameMonth := l.day != "" && l.day[:7] == day[:7]
	l.day = day
	l.chats, l.users = map[int64]Counts{}, map[int64]Counts{}
	l.chatsUSD, l.usersUSD = map[int64]float64{}, map[int64]float64{}
	l.lifted, l.told = map[int64]bool{}, map[toldKey]bool{}
	if sameMonth {
		return nil // a new day of the month: nothing written for it yet but by this run
	}
	l.month = map[string]map[chatModel]Counts{}
	files, err := filepath.Glob(filepath.Join(l.o.Dir, day[:7]+"-??.jsonl"))
	if err != nil {
		return err
	}
	for _, f := range files {
		d := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		if d > day {
			continue // the clock went back: a later day is not this month's so far
		}
		if err := l.readLocked(f, d, d == day); err != nil {
			return err
		}
	}
	return nil
}

// counts are a count line's counts, with its number of calls (a line of
// transcribed audio alone is none).
func (ln line) counts() Counts {
	c := ln.Counts
	c.Calls = max(ln.Calls, 1)
	if c.Audio > 0 && ln.Calls == 0 && c.Tokens() == 0 {
		c.Calls = 0
	}
	return c
}

func (l *Ledger) readLocked(path, day string, today bool) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	defer f.Close()
	n := 0
	err = store.Lines(f, maxUsageLine, func(b []byte, size int64) {
		n++
		ln, err := parseLine(b, size)
		if err != nil {
			l.o.Logger.Warn("usage: a line of the journal is not read", "file", path, "line", n, "err", err)
			return
		}
		switch {
		case ln.Lift != 0:
			if today {
				l.lifted[ln.Lift] = true
			}
		case ln.Told != 0:
			if today {
				l.told[toldKey{ln.Told, ln.ToldUser}] = true
			}
		case ln.Chat != 0:
			l.countLocked(day, today, ln.Chat, ln.User, ln.Model, ln.counts())
		}
	})
	if err != nil {
		return fmt.Errorf("usage: %s: %w", path, err)
	}
	return nil
}

// parseLine decodes a journal line as store.Lines hands it (nil: one of
// size bytes, over maxUsageLine).
func parseLine(b []byte, size int64) (line, error) {
	var ln line
	if b == nil {
		return ln, fmt.Errorf("%d bytes, over %d", size, maxUsageLine)
	}
	return ln, json.Unmarshal(b, &ln)
}

// wholeLine reports whether a last line without its line end is a whole
// record (store.JournalOptions.Whole).
func wholeLine(b []byte) bool {
	var ln line
	return json.Unmarshal(b, &ln) == nil
}

// modelOf is the model a call of model counts under: the default
// model when it names none.
func (l *Ledger) modelOf(model string) string {
	if model == "" {
		return l.o.DefaultModel
	}
	return model
}

func (l *Ledger) countLocked(day string, today bool, chat, user int64, model string, c Counts) {
	model = l.modelOf(model)
	if today {
		usd := l.o.Prices[model].Cost(c)
		cc := l.chats[chat]
		cc.add(c)
		l.chats[chat] = cc
		l.chatsUSD[chat] += usd
		if user != 0 {
			uc := l.users[user]
			uc.add(c)
			l.users[user] = uc
			l.usersUSD[user] += usd
		}
	}
	m := l.month[day]
	if m == nil {
		m = map[chatModel]Counts{}
		l.month[day] = m
	}
	k := chatModel{chat, model}
	mc := m[k]
	mc.add(c)
	m[k] = mc
}

// appendLocked writes ln to today's journal (0600, the folder 0700). A
// failure is logged: the count in memory still holds for this run.
func (l *Ledger) appendLocked(ln line) {
	if l.journal == nil {
		if err := os.MkdirAll(l.o.Dir, 0o700); err != nil {
			l.o.Logger.Warn("usage not saved", "err", err)
			return
		}
		j, tail, err := store.OpenJournal(filepath.Join(l.o.Dir, l.day+".jsonl"),
			store.JournalOptions{MaxLine: maxUsageLine, Whole: wholeLine})
		if err != nil {
			l.o.Logger.Warn("usage not saved", "err", err)
			return
		}
		if tail.Cut > 0 {
			l.o.Logger.Warn("usage: a torn last line of the journal cut off", "file", j.Path(), "bytes", tail.Cut)
		}
		l.journal = j
	}
	// Unsynced: a kill loses nothing, a power cut at most the last calls'
	// counts (an allowance then errs by those calls).
	data, _ := json.Marshal(ln)
	if err := l.journal.AppendUnsynced(append(data, '\n')); err != nil {
		l.o.Logger.Warn("usage not saved", "err", err)
	}
}

// Record counts a call of model ("": the default) made for chat on behalf
// of user (0: none) that was not reserved: what Reserve's spent does
// without the hold. A zero Usage (a request that never reached the model)
// is no call.
func (l *Ledger) Record(chat, user int64, model string, u llm.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recordLocked(chat, user, model, u)
}

func (l *Ledger) recordLocked(chat, user int64, model string, u llm.Usage) {
	if u == (llm.Usage{}) {
		return
	}
	c := Counts{Input: int64(u.InputTokens), Cached: int64(u.CacheReadTokens), Output: int64(u.OutputTokens),
		Estimated: int64(u.Estimated), Calls: 1}
	if err := l.rollLocked(l.o.Now().UTC()); err != nil {
		l.o.Logger.Warn("usage: the month's record is not read", "err", err)
	}
	model = l.modelOf(model)
	l.countLocked(l.day, true, chat, user, model, c)
	l.stats.Counts.add(c)
	mc := l.models[model]
	mc.add(c)
	l.models[model] = mc
	l.appendLocked(line{Chat: chat, User: user, Model: model, Counts: c})
}

// RecordAudio counts seconds of a voice note of chat's, from user,
// transcribed by model (speech-to-text): /usage shows them; no allowance
// counts them.
func (l *Ledger) RecordAudio(chat, user int64, model string, seconds int64) {
	if seconds <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.rollLocked(l.o.Now().UTC()); err != nil {
		l.o.Logger.Warn("usage: the month's record is not read", "err", err)
	}
	c := Counts{Audio: seconds}
	l.countLocked(l.day, true, chat, user, model, c)
	l.appendLocked(line{Chat: chat, User: user, Model: model, Counts: c})
}

// AllowMore lifts the allowance of chat for the rest of today (UTC): by is
// the admin.
func (l *Ledger) AllowMore(chat, by int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.rollLocked(l.o.Now().UTC()); err != nil {
		l.o.Logger.Warn("usage: the month's record is not read", "err", err)
	}
	l.lifted[chat] = true
	l.wakeLocked() // a request waiting on the chat's allowance may go
	l.appendLocked(line{Lift: chat, By: by})
	l.o.Logger.Info("daily allowance lifted for today", "chat", chat, "by", by)
}

// Close closes today's journal.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.journal == nil {
		return nil
	}
	err := l.journal.Close()
	l.journal = nil
	return err
}

// untilText says d in hours and minutes: "5 h 12 min", "3 min".
func untilText(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute) // rounded up
	if m >= 60 {
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
	return fmt.Sprintf("%d min", m)
}

// Number writes n with thousands separators: 1,234,567.
func Number(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
