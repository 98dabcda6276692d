package bot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-telegram/bot/models"
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
// An update Telegram sends again (it was journaled but not yet confirmed
// when the bot died) is recognised by its id and handled once. Done marks
// are written without a sync: a kill loses none (the kernel has them), a
// power cut may, and the message is then answered twice rather than not at
// all. When the journal cannot be written (a full disk) the update is
// handled anyway and the error logged: the chat then gets the session's
// own "could not save" reply instead of silence.

const (
	inboxFile = "updates.jsonl"
	// maxInboxLine bounds a journal line read back: an update is at most
	// maxWebhookBody, its record a little more.
	maxInboxLine = 2 * maxWebhookBody
	// inboxCompactAt is the size past which the journal is rewritten with
	// only the updates still needed, when they are a small part of it.
	inboxCompactAt = 1 << 20
)

type inbox struct {
	dir string // "": no journal, every method a no-op
	log *slog.Logger

	mu      sync.Mutex
	f       *os.File // nil until open, and after close
	size    int64    // bytes of complete records
	torn    bool     // a failed write may have left part of a record after size
	live    map[int64]*inboxEntry
	order   []int64 // ids of live, in journal order
	spent   int     // entries of live done and confirmed, to be forgotten
	failing bool    // the last write failed (logged once per streak)
}

// inboxEntry is an update of the journal that is still needed: not done,
// or done but not yet confirmed (Telegram may send it again).
type inboxEntry struct {
	raw       json.RawMessage
	claimed   bool // handed to a handler (or to the replay)
	done      bool
	confirmed bool
}

type updateRecord struct {
	ID     int64           `json:"id"`
	Update json.RawMessage `json:"update"`
}

type doneRecord struct {
	Done []int64 `json:"done"`
}

func newInbox(dir string, log *slog.Logger) *inbox {
	return &inbox{dir: dir, log: log, live: map[int64]*inboxEntry{}}
}

func (in *inbox) enabled() bool { return in.dir != "" }

// open reads the journal: every update not done is pending, for replay.
func (in *inbox) open() error {
	if !in.enabled() {
		return nil
	}
	if err := os.MkdirAll(in.dir, 0o700); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	path := filepath.Join(in.dir, inboxFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	complete, bad, err := in.load(f)
	if err == nil {
		err = cutTail(f, complete)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("inbox %s: %w", path, err)
	}
	if bad > 0 {
		in.log.Warn("inbox: skipped unreadable lines", "path", path, "lines", bad)
	}
	in.mu.Lock()
	in.f, in.size = f, complete
	in.mu.Unlock()
	return nil
}

// load reads the records of f and returns the size of its complete lines
// and how many were unreadable. Memory stays within maxInboxLine.
func (in *inbox) load(f *os.File) (complete int64, bad int, err error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		line []byte
		size int64
		long bool
	)
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if !long {
			if len(line)+len(chunk) > maxInboxLine {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF): // a last line without its '\n' is torn
			return complete, bad, nil
		case err != nil:
			return 0, 0, err
		}
		complete += size
		if long || !in.apply(line) {
			bad++
		}
		line, size, long = line[:0], 0, false
	}
}

// apply takes one journal line into live.
func (in *inbox) apply(line []byte) bool {
	var r struct {
		ID     *int64          `json:"id"`
		Update json.RawMessage `json:"update"`
		Done   []int64         `json:"done"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return len(bytes.TrimSpace(line)) == 0
	}
	switch {
	case r.ID != nil && len(r.Update) > 0:
		if _, ok := in.live[*r.ID]; !ok {
			in.live[*r.ID] = &inboxEntry{raw: r.Update}
			in.order = append(in.order, *r.ID)
		}
	case r.Done != nil:
		for _, id := range r.Done {
			if e := in.live[id]; e != nil {
				e.done, e.claimed = true, true
			}
		}
	default:
		return false
	}
	return true
}

// cutTail cuts off what follows the last complete line (a torn write).
func cutTail(f *os.File, complete int64) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == complete {
		return err
	}
	return f.Truncate(complete)
}

// replay returns the updates not done, in order, claimed: the caller
// handles them before any new one.
func (in *inbox) replay() []models.Update {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []models.Update
	for _, id := range in.order {
		e := in.live[id]
		if e == nil || e.done || e.claimed {
			continue
		}
		e.claimed = true
		var u models.Update
		if err := json.Unmarshal(e.raw, &u); err != nil {
			in.log.Warn("inbox: an update kept from the last run is unreadable", "update", id, "err", err)
			in.doneLocked(id)
			continue
		}
		out = append(out, u)
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
	if in.f == nil {
		return 0, errors.New("inbox closed")
	}
	var buf []byte
	fresh := map[int64]json.RawMessage{}
	var ids []int64
	for _, raw := range updates {
		var u struct {
			ID *int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &u); err != nil || u.ID == nil {
			continue // the poller will not make sense of it either
		}
		id := *u.ID
		if _, ok := in.live[id]; ok {
			continue // sent again: it is journaled already
		}
		if _, ok := fresh[id]; ok {
			continue
		}
		b, err := json.Marshal(updateRecord{ID: id, Update: raw})
		if err != nil {
			continue
		}
		buf = append(append(buf, b...), '\n')
		fresh[id] = raw
		ids = append(ids, id)
	}
	if len(buf) == 0 {
		return 0, nil
	}
	if err := in.writeLocked(buf, true); err != nil {
		return 0, err
	}
	for _, id := range ids {
		in.live[id] = &inboxEntry{raw: fresh[id]}
		in.order = append(in.order, id)
	}
	return len(ids), nil
}

// writeLocked appends b, syncing when asked; a failed write is cut off
// again so the journal never holds part of a record before the next.
func (in *inbox) writeLocked(b []byte, sync bool) error {
	if in.torn {
		if err := in.f.Truncate(in.size); err != nil {
			return in.failedLocked(err)
		}
		in.torn = false
	}
	_, err := in.f.Write(b)
	if err == nil && sync {
		err = in.f.Sync()
	}
	if err != nil {
		if terr := in.f.Truncate(in.size); terr != nil {
			in.torn = true
		}
		return in.failedLocked(err)
	}
	in.size += int64(len(b))
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

// claim reports whether the update should be handled now: false when the
// replay or an earlier copy of it (Telegram sent it again) has it.
func (in *inbox) claim(id int64) bool {
	if !in.enabled() {
		return true
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	e := in.live[id]
	if e == nil {
		return true // not journaled (the journal failed): handle it anyway
	}
	if e.claimed {
		return false
	}
	e.claimed = true
	return true
}

// done marks updates as needed no more.
func (in *inbox) done(ids ...int64) {
	if !in.enabled() || len(ids) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.doneLocked(ids...)
}

func (in *inbox) doneLocked(ids ...int64) {
	var marked []int64
	for _, id := range ids {
		if e := in.live[id]; e != nil && !e.done {
			e.done = true
			marked = append(marked, id)
			if e.confirmed {
				in.spent++
			}
		}
	}
	if len(marked) == 0 || in.f == nil {
		return
	}
	b, _ := json.Marshal(doneRecord{Done: marked})
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
	for id, e := range in.live {
		if !e.confirmed && match(id) {
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

// compactLocked forgets the updates done and confirmed; the journal is
// emptied when nothing is left, or rewritten with what is left when that is
// a small part of a large file.
func (in *inbox) compactLocked() {
	// Sweeping costs the size of live: only when all of it, or half of
	// it, is spent.
	if in.spent == 0 || in.spent < len(in.live) && in.spent*2 < len(in.live) {
		return
	}
	in.spent = 0
	kept := in.order[:0]
	liveBytes := 0
	for _, id := range in.order {
		e := in.live[id]
		if e.done && e.confirmed {
			delete(in.live, id)
			continue
		}
		kept = append(kept, id)
		liveBytes += len(e.raw) + 64
	}
	clear(in.order[len(kept):])
	in.order = kept
	if in.f == nil || in.size == 0 {
		return
	}
	switch {
	case len(in.live) == 0:
		if err := in.f.Truncate(0); err != nil {
			in.log.Warn("inbox: empty the journal", "err", err)
			return
		}
		in.size, in.torn = 0, false
	case in.size > inboxCompactAt && int64(liveBytes)*4 < in.size:
		if err := in.rewriteLocked(); err != nil {
			in.log.Warn("inbox: rewrite the journal", "err", err)
		}
	}
}

// rewriteLocked replaces the journal with the records of live, atomically.
func (in *inbox) rewriteLocked() error {
	var buf, done []byte
	var doneIDs []int64
	for _, id := range in.order {
		e := in.live[id]
		b, err := json.Marshal(updateRecord{ID: id, Update: e.raw})
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
		if e.done {
			doneIDs = append(doneIDs, id)
		}
	}
	if len(doneIDs) > 0 {
		done, _ = json.Marshal(doneRecord{Done: doneIDs})
		buf = append(append(buf, done...), '\n')
	}
	path := filepath.Join(in.dir, inboxFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if d, err := os.Open(in.dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	in.f.Close()
	in.f, in.size, in.torn = f, int64(len(buf)), false
	return nil
}

// close ends the journal's use; later calls are no-ops.
func (in *inbox) close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.f == nil {
		return nil
	}
	err := in.f.Close()
	in.f = nil
	return err
}

// journalResponse journals the updates of a getUpdates answer.
func (in *inbox) journalResponse(body []byte) {
	var r struct {
		OK     bool              `json:"ok"`
		Result []json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil || !r.OK {
		return
	}
	_, _ = in.journal(r.Result) // a failure is logged
}

// getUpdatesOffset reads the offset of a getUpdates request, and returns
// the request with its body restored: go-telegram/bot sends it as a
// multipart form. It returns 0 when there is none or it cannot be read.
func getUpdatesOffset(req *http.Request) (int64, *http.Request, error) {
	if req.Body == nil {
		return 0, req, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	req.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	clone := req.Clone(req.Context())
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.ContentLength = int64(len(body))
	clone.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return 0, clone, nil
	}
	form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		return 0, clone, nil
	}
	defer form.RemoveAll()
	offset, _ := strconv.ParseInt(firstValue(form.Value["offset"]), 10, 64)
	return offset, clone, nil
}

func firstValue(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
