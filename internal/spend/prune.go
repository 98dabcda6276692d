package spend

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/store"
)

// Maintain keeps the journal to what is read of it — the current UTC
// month, /usage's longest window (the allowances are daily) —: at once and
// then after every UTC midnight until ctx ends, it deletes the files of
// the months before and compacts each earlier day of this month to one
// line per chat, user and model (the sums and the number of calls; lifts and
// notices only matter on their day). A file is replaced whole (store.WriteFile):
// a crash leaves it as it was or compacted, never half. It does the work
// at most once a UTC day, whatever wakes it, and returns when ctx ends.
// Run it in a goroutine its caller waits for.
func (l *Ledger) Maintain(ctx context.Context) {
	for {
		l.maintain()
		now := l.o.Now().UTC()
		next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		t := time.NewTimer(max(next.Sub(now), time.Minute))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// maintain prunes and compacts the journal once a UTC day. Record and
// Allow wait meanwhile: the days it compacts are not appended to, unless
// the clock goes back to one of them.
func (l *Ledger) maintain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	day := l.o.Now().UTC().Format(dayLayout)
	if day == l.maintained {
		return
	}
	l.maintained = day
	entries, err := os.ReadDir(l.o.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		l.o.Logger.Warn("usage: the journal is not pruned", "err", err)
		return
	}
	monthStart := day[:7] + "-01"
	pruned, compacted := 0, 0
	for _, e := range entries {
		d, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(dayLayout, d); err != nil {
			continue // not a day's file: not ours
		}
		path := filepath.Join(l.o.Dir, e.Name())
		switch {
		case d < monthStart:
			if err := os.Remove(path); err != nil {
				l.o.Logger.Warn("usage: an old day of the journal is not deleted", "file", path, "err", err)
				continue
			}
			pruned++
		case d < day:
			done, err := l.compactDay(path)
			if err != nil {
				l.o.Logger.Warn("usage: a day of the journal is not compacted", "file", path, "err", err)
				continue
			}
			if done {
				compacted++
			}
		}
	}
	if pruned > 0 || compacted > 0 {
		l.o.Logger.Info("usage journal pruned", "deleted", pruned, "compacted", compacted, "kept_from", monthStart)
	}
}

// compactDay rewrites a past day's journal as a line per chat, user and
// model, in
// order, and reports whether it changed it (a compacted day is left as it
// is; a day with no model call goes). Lines it cannot read are dropped —
// Load skips them too —, and logged.
func (l *Ledger) compactDay(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	type key struct {
		chat, user int64
		model      string
	}
	sums := map[key]Counts{}
	torn := 0
	err = store.Lines(bytes.NewReader(data), maxUsageLine, func(b []byte, size int64) {
		ln, err := parseLine(b, size)
		if err != nil {
			torn++
			return
		}
		if ln.Chat == 0 || ln.Lift != 0 || ln.Told != 0 {
			return
		}
		k := key{ln.Chat, ln.User, l.modelOf(ln.Model)}
		c := sums[k]
		c.add(ln.counts())
		sums[k] = c
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.chat, b.chat), cmp.Compare(a.user, b.user), strings.Compare(a.model, b.model))
	})
	var out bytes.Buffer
	for _, k := range keys {
		c := sums[k]
		b, err := json.Marshal(line{Chat: k.chat, User: k.user, Model: k.model, Counts: c, Calls: c.Calls})
		if err != nil {
			return false, err
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if bytes.Equal(out.Bytes(), data) {
		return false, nil
	}
	if torn > 0 {
		l.o.Logger.Warn("usage: lines of the journal it could not read are dropped as it is compacted", "file", path, "lines", torn)
	}
	if out.Len() == 0 {
		return true, os.Remove(path)
	}
	return true, store.WriteFile(path, out.Bytes(), nil)
}
