package schedule

import (
	"cmp"
	"slices"
	"time"
)

// maxSleep bounds the timer loop's wait: a job added by a path that does
// not poke it, or a wall clock that jumped, is seen within it.
const maxSleep = time.Hour

// holdAfterFailure is how long a job whose run could not be recorded as
// started waits before it is tried again.
const holdAfterFailure = time.Minute

// queuedRun is a run waiting for its chat's lane.
type queuedRun struct {
	job     string
	slot    time.Time
	attempt int
	manual  bool // Run now: the job's schedule stays as it is
}

// lane is one chat's queues: its runs one at a time, its deliveries one
// at a time and in order. Each has a goroutine while it is not empty.
type lane struct {
	runs       []queuedRun
	running    bool
	dels       []string // delivery ids
	delivering bool
}

// loop starts the jobs that are due and sleeps until the next is.
func (s *Scheduler) loop() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		next := s.dueLocked(time.Now())
		s.mu.Unlock()
		wait := maxSleep
		if !next.IsZero() {
			wait = min(wait, time.Until(next))
		}
		t := time.NewTimer(wait)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// dueLocked queues every job due at now and returns the earliest slot
// still ahead (zero: none).
func (s *Scheduler) dueLocked(now time.Time) time.Time {
	var next time.Time
	var due []*Job
	for id, j := range s.l.st.jobs {
		if j.Done || j.Paused || j.Next.IsZero() || s.queued[id] {
			continue
		}
		at := j.Next
		if h, ok := s.hold[id]; ok {
			if h.After(now) {
				at = h
			} else {
				delete(s.hold, id)
			}
		}
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		due = append(due, j)
	}
	// In the order they were due (a chat's runs go one by one).
	slices.SortFunc(due, func(a, b *Job) int {
		return cmp.Or(a.Next.Compare(b.Next), cmp.Compare(jobNumber(a.ID), jobNumber(b.ID)))
	})
	for _, j := range due {
		s.enqueueLocked(queuedRun{job: j.ID, slot: j.Next, attempt: 1}, j.Place.Chat)
	}
	return next
}

// recoverLocked takes up what the last process left: a run started and
// not finished runs again (its second attempt; after a second stop it is
// given up as interrupted), a pending delivery is sent. Jobs due while
// the bot was down are queued by the loop's first look, once each.
func (s *Scheduler) recoverLocked(now time.Time) {
	for _, r := range sortedValues(s.l.st.runs, func(r *Run) string { return r.ID }) {
		j, ok := s.l.st.jobs[r.Job]
		if !ok || r.Outcome != Running {
			continue
		}
		if r.Attempt >= 2 {
			s.giveUpLocked(j, *r, now)
			continue
		}
		s.enqueueLocked(queuedRun{job: r.Job, slot: r.Slot, attempt: r.Attempt + 1}, j.Place.Chat)
	}
	dels := sortedValues(s.l.st.dels, func(d *Delivery) string { return d.ID })
	for _, d := range dels {
		if d.State == Pending {
			s.enqueueDeliveryLocked(d.ID, d.Place.Chat)
		}
	}
}

// giveUpLocked finishes a run the bot stopped during twice.
func (s *Scheduler) giveUpLocked(j *Job, r Run, now time.Time) {
	job := *j
	r.Finished, r.Outcome, r.Error = now, Interrupted, "the bot stopped during the run twice"
	s.stats.Failures++
	d := s.failedLocked(&job, r, "the bot was restarted during it")
	job.Done = !job.Spec.Recurring()
	if err := s.l.put(record{Job: &job, Run: &r, Delivery: d}); err != nil {
		s.log.Error("record an interrupted run", "job", j.ID, "err", err)
		return
	}
	if d != nil {
		s.enqueueDeliveryLocked(d.ID, d.Place.Chat)
	}
}

func (s *Scheduler) laneLocked(chat int64) *lane {
	ln := s.lanes[chat]
	if ln == nil {
		ln = &lane{}
		s.lanes[chat] = ln
	}
	return ln
}

// enqueueLocked queues a run in its chat's lane and starts the lane's
// run goroutine when it has none.
func (s *Scheduler) enqueueLocked(q queuedRun, chat int64) {
	s.queued[q.job] = true
	ln := s.laneLocked(chat)
	ln.runs = append(ln.runs, q)
	if !ln.running {
		ln.running = true
		s.wg.Add(1)
		go s.runLane(chat)
	}
}

// enqueueDeliveryLocked queues a delivery in its chat's lane and starts
// the lane's delivery goroutine when it has none.
func (s *Scheduler) enqueueDeliveryLocked(id string, chat int64) {
	ln := s.laneLocked(chat)
	ln.dels = append(ln.dels, id)
	if !ln.delivering {
		ln.delivering = true
		s.wg.Add(1)
		go s.deliverLane(chat)
	}
}

// dropLaneLocked forgets an idle lane.
func (s *Scheduler) dropLaneLocked(chat int64) {
	if ln := s.lanes[chat]; ln != nil && !ln.running && !ln.delivering && len(ln.runs) == 0 && len(ln.dels) == 0 {
		delete(s.lanes, chat)
	}
}

// runLane runs a chat's queued runs one at a time, each within the
// bound on runs at once.
func (s *Scheduler) runLane(chat int64) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		ln := s.lanes[chat]
		if len(ln.runs) == 0 || s.ctx.Err() != nil {
			ln.running = false
			s.dropLaneLocked(chat)
			s.mu.Unlock()
			return
		}
		q := ln.runs[0]
		ln.runs = ln.runs[1:]
		s.mu.Unlock()
		select {
		case s.sem <- struct{}{}:
		case <-s.ctx.Done():
			continue // the loop's head ends the lane
		}
		s.execute(q)
		<-s.sem
	}
}
