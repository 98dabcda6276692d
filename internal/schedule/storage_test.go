package schedule

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/store"
)

// fullDisk fails writes while full is set.
type fullDisk struct {
	store.File
	full *atomic.Bool
}

func (f fullDisk) Write(b []byte) (int, error) {
	if f.full.Load() {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(b)
}

// TestStorageFailure: a job that cannot be stored is an error (not a
// refusal); a run whose start cannot be recorded does not run, and is
// tried again a minute later, once.
func TestStorageFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var full atomic.Bool
		l, err := openLedgerWrapped(t.TempDir(), func(f store.File) store.File { return fullDisk{f, &full} })
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		r, d := newRunner(), &fakeDeliverer{}
		s := New(l, r, d, nil, Options{})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		full.Store(true)
		var ref *Refusal
		if _, err := s.Create(chatA, 1, Request{Task: "x", In: "1m"}); err == nil || errors.As(err, &ref) || len(s.All()) != 0 {
			t.Fatalf("create on a full disk: %v", err)
		}
		full.Store(false)
		j, err := s.Create(chatA, 1, Request{Task: "x", In: "1m"})
		if err != nil {
			t.Fatal(err)
		}
		full.Store(true)
		time.Sleep(time.Minute)
		synctest.Wait()
		if len(r.Calls()) != 0 {
			t.Fatal("ran without its start on record")
		}
		full.Store(false)
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if len(r.Calls()) != 0 {
			t.Fatal("tried again before the hold ended")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		c := r.Calls()
		if len(c) != 1 || len(d.Delivered()) != 1 || !c[0].Slot.Equal(j.Next) || c[0].Started.Sub(j.Next) != holdAfterFailure {
			t.Errorf("runs %+v, %d delivered", c, len(d.Delivered()))
		}
	})
}
