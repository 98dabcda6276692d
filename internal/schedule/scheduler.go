package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNotFound is a job id the chat has no job of: tell the user to list
// the jobs.
var ErrNotFound = errors.New("no such job in this chat")

// ErrClosed is returned once the Scheduler is closed.
var ErrClosed = errors.New("the scheduler is closed")

// Scheduler runs the jobs of a Ledger at their times, through a Runner,
// and delivers what they answer through a Deliverer. Its methods are
// safe for concurrent use. Every goroutine it starts ends before Close
// returns.
type Scheduler struct {
	o     Options
	l     *Ledger
	run   Runner
	dlv   Deliverer
	zones *Zones
	log   *slog.Logger

	mu      sync.Mutex
	lanes   map[int64]*lane               // by chat
	queued  map[string]bool               // jobs with a run queued or running
	cancels map[string]context.CancelFunc // running runs, by job
	hold    map[string]time.Time          // jobs not to start before (a failed write)
	stats   Stats
	started bool
	closed  bool

	wake chan struct{}
	sem  chan struct{}
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// New is a scheduler of l's jobs. It does no I/O and starts nothing
// (Start does); l stays the caller's to close, after Close.
func New(l *Ledger, r Runner, d Deliverer, zones *Zones, o Options) *Scheduler {
	o = o.withDefaults()
	if zones == nil {
		zones = &Zones{}
	}
	return &Scheduler{
		o: o, l: l, run: r, dlv: d, zones: zones, log: o.Logger.With("component", "schedule"),
		lanes: map[int64]*lane{}, queued: map[string]bool{}, cancels: map[string]context.CancelFunc{},
		hold: map[string]time.Time{}, wake: make(chan struct{}, 1), sem: make(chan struct{}, o.MaxParallel),
	}
}

// Start recovers what a stop left (runs started and not finished run
// again, once; deliveries pending are sent; jobs due while the bot was
// down run once, late) and starts the timer. ctx ends everything, as
// Close does.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("schedule: started twice")
	}
	s.started = true
	s.ctx, s.stop = context.WithCancel(ctx)
	if s.l.Skipped > 0 {
		s.log.Warn("ledger lines skipped", "count", s.l.Skipped)
	}
	s.recoverLocked(time.Now())
	s.wg.Add(1)
	go s.loop()
	return nil
}

// Close stops the timer, cancels the runs under way (they run again at
// the next start) and the delivery retries (they go on at the next
// start), and waits for every goroutine.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	s.closed = true
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.wg.Wait()
	return nil
}

// Create adds a job to place for user, or refuses it (*Refusal). It
// answers with the job (its Next in its zone).
func (s *Scheduler) Create(place Place, user int64, r Request) (Job, error) {
	now := time.Now()
	spec, notify, err := Parse(r, now, s.o, s.zones)
	if err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Job{}, ErrClosed
	}
	n := 0
	for _, j := range s.l.st.jobs {
		if j.Place.Chat == place.Chat && j.active() {
			n++
		}
	}
	if n >= s.o.MaxJobsPerChat {
		return Job{}, refuse("", "this chat already has %d scheduled jobs, the most it may have; cancel one first", n)
	}
	job := Job{
		ID: "j" + strconv.Itoa(s.l.st.seq+1), Place: place, User: user, Task: strings.TrimSpace(r.Task),
		Spec: spec, Notify: notify, Created: now,
	}
	job.Next = spec.Next(now, s.zones.loc(spec.Zone))
	if err := s.l.put(record{Job: &job}); err != nil {
		return Job{}, err
	}
	s.log.Info("job created", "job", job.ID, "chat", place.Chat, "topic", place.Topic, "schedule", spec.Text)
	s.poke()
	return job, nil
}

// Cancel removes place's job id; a run under way is cancelled (its
// answer is not sent), a delivery already pending still arrives.
func (s *Scheduler) Cancel(place Place, id string) (Job, error) {
	return s.cancel(id, func(j *Job) bool { return j.Place == place })
}

// CancelAny removes job id whatever its chat (an admin's /jobs all).
func (s *Scheduler) CancelAny(id string) (Job, error) {
	return s.cancel(id, func(*Job) bool { return true })
}

func (s *Scheduler) cancel(id string, mine func(*Job) bool) (Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.l.st.jobs[id]
	if !ok || !mine(j) {
		return Job{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	job := *j
	if err := s.l.put(record{Remove: id}); err != nil {
		return Job{}, err
	}
	if cancel := s.cancels[id]; cancel != nil {
		cancel()
	}
	s.log.Info("job cancelled", "job", id, "chat", job.Place.Chat)
	return job, nil
}

// Resume lets place's paused job id run again: its next slot is counted
// from now (a one-off job past its time runs now).
func (s *Scheduler) Resume(place Place, id string) (Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.l.st.jobs[id]
	if !ok || j.Place != place {
		return Job{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	job := *j
	job.Paused, job.PauseReason = false, ""
	now := time.Now()
	if job.Spec.Recurring() {
		job.Next = job.Spec.Next(now, s.zones.loc(job.Spec.Zone))
	} else if !job.Done && job.Next.IsZero() {
		job.Next = now
	}
	if err := s.l.put(record{Job: &job}); err != nil {
		return Job{}, err
	}
	s.poke()
	return job, nil
}

// RunNow runs place's job id now, apart from its schedule (whose next
// slot stays).
func (s *Scheduler) RunNow(place Place, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.l.st.jobs[id]
	switch {
	case s.closed || !s.started:
		return ErrClosed
	case !ok || j.Place != place:
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	case s.queued[id]:
		return &Refusal{Reason: "the job is running already"}
	}
	s.enqueueLocked(queuedRun{job: id, slot: time.Now().Truncate(time.Second), attempt: 1, manual: true}, j.Place.Chat)
	return nil
}

// List is place's jobs with their last runs and deliveries.
func (s *Scheduler) List(place Place) []JobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.l.st.views(func(j *Job) bool { return j.Place == place })
}

// All is every chat's jobs (an admin's /jobs all).
func (s *Scheduler) All() []JobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.l.st.views(func(*Job) bool { return true })
}

// Zones is the zone cache Parse uses (for /tz to check a name).
func (s *Scheduler) Zones() *Zones { return s.zones }

// poke wakes the timer loop to look at the jobs again.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
