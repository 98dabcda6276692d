package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// deliverLane sends a chat's pending deliveries one at a time, in order,
// each until it arrives or the chat is gone.
func (s *Scheduler) deliverLane(chat int64) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		ln := s.lanes[chat]
		if len(ln.dels) == 0 || s.ctx.Err() != nil {
			ln.delivering = false
			s.dropLaneLocked(chat)
			s.mu.Unlock()
			return
		}
		id := ln.dels[0]
		ln.dels = ln.dels[1:]
		s.mu.Unlock()
		s.deliver(id)
	}
}

// deliver tries delivery id until it is settled or the scheduler stops
// (it stays pending for the next start).
func (s *Scheduler) deliver(id string) {
	for {
		s.mu.Lock()
		d, ok := s.l.st.dels[id]
		if !ok || d.State != Pending {
			s.mu.Unlock()
			return
		}
		m := Message{Place: d.Place, Text: d.Text, Job: d.Job, Run: d.ID, Skip: d.Sent}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(s.ctx, s.o.DeliverTimeout)
		err := s.dlv.Deliver(ctx, m)
		cancel()
		if err != nil && s.ctx.Err() != nil {
			return // stopping: it stays pending
		}
		wait, done := s.settle(id, err)
		if done {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// settle records one try of delivery id; done reports it settled, wait
// is how long to wait before the next try.
func (s *Scheduler) settle(id string, err error) (wait time.Duration, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d0, ok := s.l.st.dels[id]
	if !ok {
		return 0, true
	}
	d := *d0
	d.Attempts++
	d.Updated = time.Now()
	var job *Job
	var perm *PermanentError
	switch {
	case err == nil:
		d.State, d.LastError = Delivered, ""
		s.stats.Deliveries++
	case errors.As(err, &perm):
		d.State, d.LastError = Refused, capString(err.Error(), maxErrorText)
		s.stats.DeliveryFailures++
		if j, ok := s.l.st.jobs[d.Job]; ok {
			jc := *j
			jc.Paused, jc.PauseReason = true, perm.Reason
			job = &jc
		}
		s.log.Warn("delivery refused for good; job paused", "job", d.Job, "run", id, "err", err)
	default:
		d.LastError = capString(err.Error(), maxErrorText)
		d.Sent += chat.SentParts(err) // the parts of this try, which began at Sent
		s.stats.DeliveryRetries++
		wait = s.backoff(d.Attempts, err)
		s.log.Warn("delivery failed; retrying", "job", d.Job, "run", id, "attempt", d.Attempts, "wait", wait, "err", err)
	}
	if d.State != Pending {
		d.Text = "" // sent or never to be: the memory and the ledger need it no more
	}
	if perr := s.l.put(record{Job: job, Delivery: &d}); perr != nil {
		s.log.Error("record a delivery", "run", id, "err", perr)
		s.l.st.apply(record{Job: job, Delivery: &d})
	}
	return wait, d.State != Pending
}

// backoff is the wait before try attempts+1: doubling from RetryMin to
// RetryMax, and never shorter than what the error asks for.
func (s *Scheduler) backoff(attempts int, err error) time.Duration {
	wait := s.o.RetryMin
	for i := 1; i < attempts && wait < s.o.RetryMax; i++ {
		wait *= 2
	}
	wait = min(wait, s.o.RetryMax)
	return max(wait, retryAfter(err))
}
