package schedule

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// runCall is one call of the fake runner.
type runCall struct {
	Job     Job
	Slot    time.Time
	Late    bool
	Started time.Time
}

// fakeRunner answers with answer(call number, job) — by default "answer
// N" — and logs its calls. With gate set it waits for a value on it (or
// its context) before answering.
type fakeRunner struct {
	mu     sync.Mutex
	calls  []runCall
	answer func(n int, job Job) (Result, error)
	gate   chan struct{}
	// running and maxRunning count runs at once, per chat and in all.
	running    map[int64]int
	all, peak  int
	chatPeak   int
	onCallHook func(runCall)
}

func newRunner() *fakeRunner { return &fakeRunner{running: map[int64]int{}} }

func (f *fakeRunner) RunJob(ctx context.Context, job Job, slot time.Time, late bool) (Result, error) {
	f.mu.Lock()
	c := runCall{Job: job, Slot: slot, Late: late, Started: time.Now()}
	f.calls = append(f.calls, c)
	n := len(f.calls)
	f.running[job.Place.Chat]++
	f.all++
	f.peak = max(f.peak, f.all)
	f.chatPeak = max(f.chatPeak, f.running[job.Place.Chat])
	gate, answer, hook := f.gate, f.answer, f.onCallHook
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running[job.Place.Chat]--
		f.all--
		f.mu.Unlock()
	}()
	if hook != nil {
		hook(c)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	if answer != nil {
		return answer(n, job)
	}
	return Result{Answer: fmt.Sprintf("answer %d", n), Tokens: 100}, nil
}

// setAnswer changes the answers of the calls to come.
func (f *fakeRunner) setAnswer(fn func(n int, job Job) (Result, error)) {
	f.mu.Lock()
	f.answer = fn
	f.mu.Unlock()
}

func (f *fakeRunner) Calls() []runCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runCall(nil), f.calls...)
}

// fakeDeliverer records what it was given; fail, when set, decides each
// try's error (nil: delivered). With gate set it waits on it first.
type fakeDeliverer struct {
	mu        sync.Mutex
	tries     []Message
	delivered []Message
	fail      func(n int, m Message) error
	gate      chan struct{}
	hook      func(Message)
}

func (f *fakeDeliverer) Deliver(ctx context.Context, m Message) error {
	f.mu.Lock()
	f.tries = append(f.tries, m)
	n := len(f.tries)
	fail, gate, hook := f.fail, f.gate, f.hook
	f.mu.Unlock()
	if hook != nil {
		hook(m)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		if err := fail(n, m); err != nil {
			return err
		}
	}
	f.mu.Lock()
	f.delivered = append(f.delivered, m)
	f.mu.Unlock()
	return nil
}

func (f *fakeDeliverer) Delivered() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.delivered...)
}

func (f *fakeDeliverer) Tries() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.tries...)
}

// rig is a scheduler over a ledger in dir, started; closed at the end
// of the test.
type rig struct {
	dir string
	l   *Ledger
	s   *Scheduler
	r   *fakeRunner
	d   *fakeDeliverer
}

func startRig(t *testing.T, dir string, r *fakeRunner, d *fakeDeliverer, o Options) *rig {
	t.Helper()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := New(l, r, d, nil, o)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := &rig{dir: dir, l: l, s: s, r: r, d: d}
	t.Cleanup(g.close)
	return g
}

// close stops the scheduler and closes the ledger (again: a no-op).
func (g *rig) close() {
	g.s.Close()
	g.l.Close()
}

func (g *rig) create(t *testing.T, place Place, r Request) Job {
	t.Helper()
	if r.Task == "" {
		r.Task = "tell me the news"
	}
	j, err := g.s.Create(place, 7, r)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// crashCopy copies the ledger folder as it is on disk now: what a kill of
// the bot at this moment would leave (every record is synced before the
// next step).
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	src, err := os.Open(filepath.Join(dir, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(to, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}

var (
	chatA = Place{Chat: 100}
	chatB = Place{Chat: 200}
)
