package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/store"
)

// The inbox is the bot's update journal. Telegram forgets an update once
// the bot has confirmed it (polling: the next getUpdates carries a higher
// offset; webhook: the post was answered 200), and the bot confirms long
// before a chat's message has had its turn: a message waiting behind a
// running turn lived only in memory, and a bot killed then lost it. So
// every update is written to <InboxDir>/updates.jsonl and synced before
// Telegram can hear that it arrived — polling: when the getUpdates answer
// comes in, before the poller sees it (so before the next getUpdates
// commits its offset); webhook: before the 200 — and marked done once
// nothing more is needed from it: its chat's session took the message
// (the transcript holds it, or /new dropped it, or the chat was told it
// could not be handled), or it needed no session (a command, a refusal,
// chatter not meant for the bot). At start the updates not done are
// handled again, in order, before any new one; commands among them are
// not run again (a /new or /stop from before a restart would act on a
// conversation the user has moved on from): they are logged and dropped.
//
// What can really come twice is an update Telegram sends again: it was
// journaled but not yet confirmed when the bot died, and Telegram keeps
// an unconfirmed update for at most a day. So an update is taken for one
// sent again only when it is the same bot's, within that day, not yet
// confirmed, and the same update (its content, not only its id); it is
// then handled once, and the log says so. Update ids are not unique over
// time: a new Bot API server, or Telegram after a week without updates,
// starts them again, and a new bot token on the same data directory has
// its own. A new update with an id the journal holds is a new update (the
// log says the ids restarted), so entries are keyed by the journal's own
// sequence, not by update id. Records name their bot (getMe's id): the
// updates another bot left are not handed to this one (it cannot answer
// in their chats as that bot), and the log says how many were dropped.
//
// Done marks are written without a sync: a kill loses none (the kernel
// has them), a power cut may, and the message is then answered twice
// rather than not at all. When the journal cannot be written (a full
// disk) the update is handled anyway and the error logged: the chat then
// gets the session's own "could not save" reply instead of silence.

const (
	inboxFile = "updates.jsonl"
	// maxInboxLine bounds a journal line read back: an update is at most
	// maxWebhookBody, its record a little more.
	maxInboxLine = 2 * maxWebhookBody
	// inboxCompactAt is the size past which the journal is rewritten with
	// only the updates still needed, when they are a small part of it.
	inboxCompactAt = 1 << 20
	// telegramKeeps is how long Telegram keeps an update the bot has not
	// confirmed: an update journaled longer ago is never sent again.
	telegramKeeps = 24 * time.Hour
	// inboxSweepEvery is how often a compaction looks for the updates
	// aged past telegramKeeps.
	inboxSweepEvery = time.Hour
)

type inbox struct {
	dir string // "": no journal, every method a no-op
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	j       *store.Journal // nil until open, and after close
	bot     int64          // the bot whose updates these are (getMe's id)
	seq     int64          // the last key given
	live    map[int64]*inboxEntry
	latest  map[int64]int64 // update id → key of its newest entry in live
	order   []int64         // keys of live, in journal order
	spent   int             // entries of live done and confirmed, to be forgotten
	failing bool            // the last write failed (logged once per streak)
	reused  bool            // the log said the update ids restarted
	swept   time.Time       // the last compaction's sweep
}

// inboxEntry is an update of the journal that is still needed: not done,
// or done but not yet confirmed (Telegram may send it again).
type inboxEntry struct {
	id        int64 // the update's id
	at        time.Time
	raw       json.RawMessage
	claimed   bool // handed to a handler (or to the replay)
	done      bool
	confirmed bool
}

// keptUpdate is an update of the last run handed in again, with its key
// for done.
type keptUpdate struct {
	key    int64
	update models.Update
}

// updateRecord is a journal line holding an update. Key, Bot and At are
// absent from the lines of older versions.
type updateRecord struct {
	Key    int64           `json:"k,omitempty"`
	Bot    int64           `json:"bot,omitempty"`
	At     int64           `json:"at,omitempty"` // unix seconds
	ID     int64           `json:"id"`
	Update json.RawMessage `json:"update"`
}

// doneRecord marks entries done: by key (DoneKeys), or, in the lines of
// older versions, by update id (Done).
type doneRecord struct {
	DoneKeys []int64 `json:"done_keys,omitempty"`
	Done     []int64 `json:"done,omitempty"`
}

func newInbox(dir string, log *slog.Logger) *inbox {
	return &inbox{dir: dir, log: log, now: time.Now, live: map[int64]*inboxEntry{}, latest: map[int64]int64{}}
}

func (in *inbox) enabled() bool { return in.dir != "" }

// open reads the journal for bot (getMe's id): every update of bot not
// done is pending, for replay; another bot's are dropped, with a warning.
func (in *inbox) open(bot int64) error {
	if !in.enabled() {
		return nil
	}
	if err := os.MkdirAll(in.dir, 0o700); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	path := filepath.Join(in.dir, inboxFile)
	// A last line without its line end (the bot stopped mid-write) is cut
	// off: its update was never synced, so Telegram was never told.
	j, tail, err := store.OpenJournal(path, store.JournalOptions{MaxLine: maxInboxLine})
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.bot, in.swept = bot, in.now()
	ld := &journalLoad{in: in, byID: map[int64]int64{}, others: map[int64]int{}}
	if err := j.Read(ld.line); err != nil {
		j.Close()
		return fmt.Errorf("inbox %s: %w", path, err)
	}
	ld.settle()
	if ld.bad > 0 || tail.Cut > 0 {
		in.log.Warn("inbox: skipped unreadable lines", "path", path, "lines", ld.bad, "torn_bytes_cut", tail.Cut)
	}
	in.j = j
	if len(ld.others) > 0 {
		for other, waiting := range ld.others {
			level := slog.LevelInfo
			if waiting > 0 {
				level = slog.LevelWarn
			}
			in.log.Log(context.Background(), level, "inbox: the journal holds updates of another bot (the bot token "+
				"changed): the messages it had not answered are not handed to this one", "other_bot", other, "bot", bot,
				"dropped", waiting)
		}
		if err := in.rewriteLocked(); err != nil {
			in.log.Warn("inbox: rewrite the journal", "err", err)
		}
	}
	return nil
}

// journalLoad reads a journal into its inbox.
type journalLoad struct {
	in      *inbox
	bad     int             // unreadable lines
	byID    map[int64]int64 // update id → key, for the done lines of older versions
	others  map[int64]int   // another bot → its updates not done
	foreign map[int64]int64 // key → the other bot it belongs to
}

// line takes one journal line (nil: one over maxInboxLine, not read).
func (ld *journalLoad) line(line []byte, _ int64) {
	if line == nil || !ld.apply(line) {
		ld.bad++
	}
}

// apply takes one journal line.
func (ld *journalLoad) apply(line []byte) bool {
	in := ld.in
	var r struct {
		updateRecord
		ID *int64 `json:"id"`
		doneRecord
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return len(bytes.TrimSpace(line)) == 0
	}
	switch {
	case r.ID != nil && len(r.Update) > 0:
		key := r.Key
		if key <= in.seq { // a line of an older version, or out of order
			key = in.seq + 1
		}
		in.seq = key
		at := in.now()
		if r.At > 0 {
			at = time.Unix(r.At, 0)
		}
		in.live[key] = &inboxEntry{id: *r.ID, at: at, raw: r.Update}
		in.order = append(in.order, key)
		ld.byID[*r.ID] = key
		if r.Bot != 0 && r.Bot != in.bot {
			if ld.foreign == nil {
				ld.foreign = map[int64]int64{}
			}
			ld.foreign[key] = r.Bot
		} else {
			in.latest[*r.ID] = key
		}
	case r.DoneKeys != nil || r.Done != nil:
		for _, key := range r.DoneKeys {
			if e := in.live[key]; e != nil {
				e.done, e.claimed = true, true
			}
		}
		for _, id := range r.Done {
			if e := in.live[ld.byID[id]]; e != nil {
				e.done, e.claimed = true, true
			}
		}
	default:
		return false
	}
	return true
}

// settle drops another bot's entries, counting those not done.
func (ld *journalLoad) settle() {
	in := ld.in
	if len(ld.foreign) == 0 {
		return
	}
	kept := in.order[:0]
	for _, key := range in.order {
		other, ok := ld.foreign[key]
		if !ok {
			kept = append(kept, key)
			continue
		}
		if e := in.live[key]; !e.done {
			ld.others[other]++
		} else if _, seen := ld.others[other]; !seen {
			ld.others[other] = 0
		}
		delete(in.live, key)
	}
	clear(in.order[len(kept):])
	in.order = kept
}

// replay returns the updates not done, in order, claimed: the caller
// handles them before any new one.
func (in *inbox) replay() []keptUpdate {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []keptUpdate
	for _, key := range in.order {
		e := in.live[key]
		if e == nil || e.done || e.claimed {
			continue
		}
		e.claimed = true
		var u models.Update
		if err := json.Unmarshal(e.raw, &u); err != nil {
			in.log.Warn("inbox: an update kept from the last run is unreadable", "update", e.id, "err", err)
			in.doneLocked(key)
			continue
		}
		out = append(out, keptUpdate{key: key, update: u})
	}
	return out
}

// journal writes updates (the raw JSON Telegram sent) not journaled yet,
// and syncs them. It returns how many it wrote.
func (in *inbox) journal(updates []json.RawMessage) (int, error) {
	if !in.enabled() || len(updates) == 0 {
		return 0, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.j == nil {
		return 0, errors.New("inbox closed")
	}
	now := in.now()
	var (
		buf   []byte
		fresh []*inboxEntry
		batch = map[int64]json.RawMessage{}
	)
	for _, raw := range updates {
		var u struct {
			ID *int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &u); err != nil || u.ID == nil {
			continue // the poller will not make sense of it either
		}
		id := *u.ID
		if prev, ok := batch[id]; ok && sameUpdate(prev, raw) {
			continue
		}
		if e := in.live[in.latest[id]]; e != nil {
			if in.sentAgainLocked(e, raw, now) {
				continue // journaled already
			}
			if !in.reused {
				in.reused = true
				in.log.Warn("inbox: update ids restarted (a new Bot API server, or Telegram after a week without "+
					"updates): an update whose id the journal holds is a new one, and is handled", "update", id)
			}
		}
		b, err := json.Marshal(updateRecord{Key: in.seq + int64(len(fresh)) + 1, Bot: in.bot, At: now.Unix(), ID: id, Update: raw})
		if err != nil {
			continue
		}
		buf = append(append(buf, b...), '\n')
		batch[id] = raw
		fresh = append(fresh, &inboxEntry{id: id, at: now, raw: raw})
	}
	if len(buf) == 0 {
		return 0, nil
	}
	if err := in.writeLocked(buf, true); err != nil {
		return 0, err
	}
	for _, e := range fresh {
		in.seq++
		if old := in.live[in.latest[e.id]]; old != nil && old.done && !old.confirmed {
			in.spent++ // superseded: never sent again
		}
		in.live[in.seq] = e
		in.latest[e.id] = in.seq
		in.order = append(in.order, in.seq)
	}
	return len(fresh), nil
}

// sentAgainLocked reports whether raw is e sent again by Telegram: not
// yet confirmed, within the day Telegram keeps it, and the same update.
func (in *inbox) sentAgainLocked(e *inboxEntry, raw json.RawMessage, now time.Time) bool {
	return !e.confirmed && now.Sub(e.at) < telegramKeeps && sameUpdate(e.raw, raw)
}

// sameUpdate reports whether two updates' JSON says the same, whatever
// the spacing and the order of keys.
func sameUpdate(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, erra := decodeExact(a)
	vb, errb := decodeExact(b)
	return erra == nil && errb == nil && reflect.DeepEqual(va, vb)
}

func decodeExact(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// writeLocked appends b, syncing when asked; a failed write is cut off
// again (store.Journal) so the journal never holds part of a record
// before the next.
func (in *inbox) writeLocked(b []byte, sync bool) error {
	write := in.j.AppendUnsynced
	if sync {
		write = in.j.Append
	}
	if err := write(b); err != nil {
		return in.failedLocked(err)
	}
	if in.failing {
		in.failing = false
		in.log.Info("inbox: the update journal can be written again")
	}
	return nil
}

// failedLocked logs the first of a streak of write failures.
func (in *inbox) failedLocked(err error) error {
	if !in.failing {
		in.failing = true
		in.log.Error("inbox: cannot write the update journal: updates are handled, but one that waits for its "+
			"chat is lost if the bot is killed before it is answered", "err", err)
	}
	return fmt.Errorf("inbox: %w", err)
}

// claim reports whether the update with id should be handled now, and
// its key for done (0: not journaled). It is false when the replay or an
// earlier copy of it (Telegram sent it again) has it.
func (in *inbox) claim(id int64) (key int64, ok bool) {
	if !in.enabled() {
		return 0, true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	key = in.latest[id]
	e := in.live[key]
	if e == nil {
		return 0, true // not journaled (the journal failed): handle it anyway
	}
	if e.claimed {
		return key, false
	}
	e.claimed = true
	return key, true
}

// done marks the entries of keys as needed no more.
func (in *inbox) done(keys ...int64) {
	if !in.enabled() || len(keys) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.doneLocked(keys...)
}

func (in *inbox) doneLocked(keys ...int64) {
	var marked []int64
	for _, key := range keys {
		if e := in.live[key]; e != nil && !e.done {
			e.done = true
			marked = append(marked, key)
			if e.confirmed || in.latest[e.id] != key {
				in.spent++
			}
		}
	}
	if len(marked) == 0 || in.j == nil {
		return
	}
	b, _ := json.Marshal(doneRecord{DoneKeys: marked})
	if err := in.writeLocked(append(b, '\n'), false); err != nil {
		return // logged; the update is handled again after a restart
	}
	in.compactLocked()
}

// confirm records that Telegram will not send the updates below offset
// again (a getUpdates with that offset was answered).
func (in *inbox) confirm(offset int64) {
	in.confirmWhere(func(id int64) bool { return id < offset })
}

// confirmID records that Telegram will not post update id again (the
// webhook answered 200).
func (in *inbox) confirmID(id int64) {
	in.confirmWhere(func(x int64) bool { return x == id })
}

func (in *inbox) confirmWhere(match func(int64) bool) {
	if !in.enabled() {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	changed := false
	for _, e := range in.live {
		if !e.confirmed && match(e.id) {
			e.confirmed, changed = true, true
			if e.done {
				in.spent++
			}
		}
	}
	if changed {
		in.compactLocked()
	}
}

// forgettable reports whether entry key is needed no more: done, and
// Telegram will not send it again (confirmed, older than it keeps
// updates, or a newer update took its id).
func (in *inbox) forgettable(key int64, e *inboxEntry, now time.Time) bool {
	return e.done && (e.confirmed || now.Sub(e.at) >= telegramKeeps || in.latest[e.id] != key)
}

// compactLocked forgets the updates needed no more; the journal is
// emptied when nothing is left, or rewritten with what is left when that
// is a small part of a large file.
func (in *inbox) compactLocked() {
	// Sweeping costs the size of live: only when all of it, or half of
	// it, is spent, or now and then for what aged past telegramKeeps.
	now := in.now()
	if (in.spent == 0 || in.spent < len(in.live) && in.spent*2 < len(in.live)) && now.Sub(in.swept) < inboxSweepEvery {
		return
	}
	in.spent, in.swept = 0, now
	kept := in.order[:0]
	liveBytes := 0
	for _, key := range in.order {
		e := in.live[key]
		if in.forgettable(key, e, now) {
			delete(in.live, key)
			if in.latest[e.id] == key {
				delete(in.latest, e.id)
			}
			continue
		}
		kept = append(kept, key)
		liveBytes += len(e.raw) + 96
	}
	clear(in.order[len(kept):])
	in.order = kept
	if in.j == nil || in.j.Size() == 0 {
		return
	}
	switch {
	case len(in.live) == 0:
		if err := in.j.Empty(); err != nil {
			in.log.Warn("inbox: empty the journal", "err", err)
		}
	case in.j.Size() > inboxCompactAt && int64(liveBytes)*4 < in.j.Size():
		if err := in.rewriteLocked(); err != nil {
			in.log.Warn("inbox: rewrite the journal", "err", err)
		}
	}
}

// rewriteLocked replaces the journal with the records of live, atomically.
func (in *inbox) rewriteLocked() error {
	var buf []byte
	var doneKeys []int64
	for _, key := range in.order {
		e := in.live[key]
		b, err := json.Marshal(updateRecord{Key: key, Bot: in.bot, At: e.at.Unix(), ID: e.id, Update: e.raw})
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
		if e.done {
			doneKeys = append(doneKeys, key)
		}
	}
	if len(doneKeys) > 0 {
		done, _ := json.Marshal(doneRecord{DoneKeys: doneKeys})
		buf = append(append(buf, done...), '\n')
	}
	return in.j.Replace(buf)
}

// close ends the journal's use; later calls are no-ops.
func (in *inbox) close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.j == nil {
		return nil
	}
	err := in.j.Close()
	in.j = nil
	return err
}
