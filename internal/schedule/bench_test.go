package schedule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// countingDeliverer counts each run's deliveries and signals when n runs
// have one.
type countingDeliverer struct {
	mu    sync.Mutex
	count map[string]int
	n     int
	done  chan struct{}
}

func (c *countingDeliverer) Deliver(_ context.Context, m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[m.Run]++
	if len(c.count) == c.n && c.count[m.Run] == 1 {
		close(c.done)
	}
	return nil
}

// lateness records how long after its slot each run started.
type lateness struct {
	sleep time.Duration // the model's time
	mu    sync.Mutex
	worst time.Duration
	runs  int
}

func (l *lateness) RunJob(_ context.Context, job Job, slot time.Time, _ bool) (Result, error) {
	l.mu.Lock()
	l.worst = max(l.worst, time.Since(slot))
	l.runs++
	l.mu.Unlock()
	time.Sleep(l.sleep)
	return Result{Answer: "top 5 of " + job.ID, Tokens: 1}, nil
}

// writeJobs writes a ledger of jobs jobs across chats chats, all due
// within spread from start.
func writeJobs(tb testing.TB, dir string, jobs, chats int, start time.Time, spread time.Duration) {
	tb.Helper()
	var buf bytes.Buffer
	for i := range jobs {
		j := Job{
			ID: fmt.Sprintf("j%d", i+1), Place: Place{Chat: int64(i%chats + 1)}, Task: "send me the top 5 of Hacker News",
			Spec:    Spec{Kind: Every, Every: time.Hour, Anchor: start.Add(-time.Hour), Zone: "UTC", Text: "every 1h"},
			Notify:  Always,
			Created: start.Add(-time.Hour),
			Next:    start.Add(spread * time.Duration(i) / time.Duration(jobs)),
		}
		b, err := json.Marshal(record{Job: &j})
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, LedgerFile), buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkThousandJobsOneMinute: 1,000 jobs across 100 chats due within
// the same minute (here at the same instant: the worst case), an instant
// runner and deliverer: one op is all of them run and delivered (3,000
// synced ledger records). Every run must
// start within its minute and every answer arrive exactly once.
func BenchmarkThousandJobsOneMinute(b *testing.B) {
	const jobs, chats = 1000, 100
	var heap uint64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		writeJobs(b, dir, jobs, chats, time.Now(), 0) // all due now
		l, err := OpenLedger(dir)
		if err != nil {
			b.Fatal(err)
		}
		r := &lateness{}
		d := &countingDeliverer{count: map[string]int{}, n: jobs, done: make(chan struct{})}
		s := New(l, r, d, nil, Options{})
		b.StartTimer()
		if err := s.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		select {
		case <-d.done:
		case <-time.After(2 * time.Minute):
			b.Fatalf("%d of %d delivered", len(d.count), jobs)
		}
		b.StopTimer()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapAlloc)
		s.Close()
		l.Close()
		if r.runs != jobs || r.worst >= time.Minute {
			b.Fatalf("%d runs, the latest started %v after its slot", r.runs, r.worst)
		}
		for run, n := range d.count {
			if n != 1 {
				b.Fatalf("%s delivered %d times", run, n)
			}
		}
		b.ReportMetric(float64(r.worst.Milliseconds()), "worst-start-ms")
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// TestThousandJobsOneMinute is the benchmark's claim on the fake clock,
// with a model that is fast but not instant: 1,000 jobs of 100 chats due
// at the same minute, each run taking 100 ms, four at once (the default)
// — every run starts within its minute (the last after 25 s) and every
// answer arrives exactly once.
func TestThousandJobsOneMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const jobs, chats = 1000, 100
		dir := t.TempDir()
		start := time.Now().Add(time.Minute)
		writeJobs(t, dir, jobs, chats, start, 0)
		r := &lateness{sleep: 100 * time.Millisecond}
		d := &countingDeliverer{count: map[string]int{}, n: jobs, done: make(chan struct{})}
		l, err := OpenLedger(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		s := New(l, r, d, nil, Options{})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		<-d.done
		synctest.Wait() // the last delivery is recorded after Deliver returns
		if r.runs != jobs || r.worst >= time.Minute || r.worst < 24*time.Second {
			t.Errorf("%d runs, the latest started %v after its slot", r.runs, r.worst)
		}
		for run, n := range d.count {
			if n != 1 {
				t.Errorf("%s delivered %d times", run, n)
			}
		}
		if st := s.Stats(); st.Runs != jobs || st.Deliveries != jobs || st.LateRuns != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}
