package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// maxErrorText bounds a run's error as stored.
const maxErrorText = 500

// What of an answer is kept once it is sent: a job's last answer (what a
// watcher compares by lines, what the next run is given) and the start
// of each run's (for lists). They bound the memory a job holds: the whole
// answer is kept only until it is delivered.
const (
	maxLastAnswer = 8 << 10
	maxRunAnswer  = 2 << 10
)

// execute runs q: records its start (and the job's next slot) before
// calling the runner, and its end with the delivery it leaves as one
// record after. A run whose start is on record never starts again for
// its slot, except as the second attempt after a stop.
func (s *Scheduler) execute(q queuedRun) {
	run, job, ok := s.begin(q)
	if !ok {
		s.poke() // the job is free again: its next time counts
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.o.RunTimeout)
	s.mu.Lock()
	s.cancels[q.job] = cancel
	s.mu.Unlock()
	res, err := s.run.RunJob(ctx, job, run.Slot, run.Late)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cancels, q.job)
	delete(s.queued, q.job)
	defer s.poke()
	if err != nil && s.ctx.Err() != nil {
		return // stopping: the run is on record as started, it runs again at the next start
	}
	j, ok := s.l.st.jobs[q.job]
	if !ok {
		return // cancelled during the run: nothing to send
	}
	s.finishLocked(j, run, res, err)
}

// begin records q's start; ok is false when it must not run.
func (s *Scheduler) begin(q queuedRun) (Run, Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.l.st.jobs[q.job]
	id := runID(q.job, q.slot)
	prev, seen := s.l.st.runs[id]
	fresh := q.attempt == 1
	if !ok || (seen && prev.Outcome != Running) || (fresh && seen) || (fresh && !q.manual && j.Paused) {
		delete(s.queued, q.job) // cancelled, paused since queued, or this slot ran already
		return Run{}, Job{}, false
	}
	now := time.Now()
	job := *j
	if !q.manual || !job.Spec.Recurring() {
		job.Next = time.Time{}
		if job.Spec.Recurring() {
			job.Next = job.Spec.Next(maxTime(q.slot, now), s.zones.loc(job.Spec.Zone))
		}
	}
	run := Run{
		ID: id, Job: job.ID, Place: job.Place, Slot: q.slot, Started: now, Attempt: q.attempt,
		Late: now.Sub(q.slot) > s.o.LateAfter,
	}
	if err := s.l.put(record{Job: &job, Run: &run}); err != nil {
		s.log.Error("record a run's start", "job", job.ID, "err", err)
		s.hold[job.ID] = now.Add(holdAfterFailure)
		delete(s.queued, q.job)
		return Run{}, Job{}, false
	}
	s.stats.Runs++
	if run.Late {
		s.stats.LateRuns++
	}
	s.log.Info("run started", "job", job.ID, "run", id, "late", run.Late, "attempt", q.attempt)
	return run, job, true
}

// finishLocked records the run's end, the job's new state and what is
// to be sent, and queues the sending.
func (s *Scheduler) finishLocked(j *Job, run Run, res Result, err error) {
	job := *j
	now := time.Now()
	run.Finished, run.Tokens = now, res.Tokens
	job.Tokens += int64(res.Tokens)
	var d *Delivery
	if err != nil {
		run.Outcome, run.Error = Failed, capString(err.Error(), maxErrorText)
		s.stats.Failures++
		user, ok := chat.UserMessage(err)
		switch {
		case ok:
		case errors.Is(err, context.DeadlineExceeded):
			user = "it ran longer than " + human(s.o.RunTimeout)
		default:
			user = "the run failed"
		}
		d = s.failedLocked(&job, run, user)
	} else {
		d = s.answeredLocked(&job, &run, res.Answer)
	}
	if !job.Spec.Recurring() {
		job.Done = true
	}
	if perr := s.l.put(record{Job: &job, Run: &run, Delivery: d}); perr != nil {
		// The run is done and its answer is here: send it rather than lose
		// it; the ledger may run it again after a restart.
		s.log.Error("record a run's end", "job", job.ID, "err", perr)
		s.l.st.apply(record{Job: &job, Run: &run, Delivery: d})
	}
	s.log.Info("run finished", "job", job.ID, "run", run.ID, "outcome", run.Outcome, "tokens", run.Tokens)
	if err := s.l.compactIfGrown(now); err != nil {
		s.log.Error("compact the ledger", "err", err)
	}
	if d != nil {
		s.enqueueDeliveryLocked(d.ID, d.Place.Chat)
	}
}

// failedLocked counts a failed run against job and returns the notice
// the user gets, if any: a one-off job's failure at once; a recurring
// job's when it has failed ErrorsToTell times in a row, once.
func (s *Scheduler) failedLocked(job *Job, run Run, reason string) *Delivery {
	job.Errors++
	var text string
	switch {
	case !job.Spec.Recurring():
		text = failedOnceText(*job, reason)
	case job.Errors >= s.o.ErrorsToTell && !job.Told:
		job.Told = true
		text = failingText(*job, reason)
	default:
		return nil
	}
	return &Delivery{ID: run.ID, Job: job.ID, Place: job.Place, Text: text, State: Pending, Created: run.Finished}
}

// answeredLocked settles a run that answered: a watcher's answer equal to
// the last one sent is kept back; any other is sent (a watcher's with
// what changed first, a late run's with a line saying so).
func (s *Scheduler) answeredLocked(job *Job, run *Run, answer string) *Delivery {
	answer = capString(answer, s.o.MaxAnswerBytes)
	run.Answer = capString(answer, maxRunAnswer)
	job.Errors, job.Told = 0, false
	hash := answerHash(answer)
	if job.Notify == Changed && job.LastHash != "" && hash == job.LastHash {
		run.Outcome = Unchanged
		s.stats.Unchanged++
		return nil
	}
	run.Outcome = OK
	text := answer
	if text == "" {
		text = emptyAnswerText
	}
	if job.Notify == Changed && job.LastHash != "" {
		if job.LastCut || len(answer) > maxLastAnswer {
			text = changedText + "\n\n" + text // too long to compare by lines
		} else {
			text = whatChanged(job.LastAnswer, answer) + "\n\n" + text
		}
	}
	if run.Late {
		text = lateText(run.Slot.In(s.zones.loc(job.Spec.Zone))) + "\n\n" + text
	}
	job.LastHash = hash
	job.LastAnswer, job.LastCut = capString(answer, maxLastAnswer), len(answer) > maxLastAnswer
	return &Delivery{ID: run.ID, Job: job.ID, Place: job.Place, Text: text, State: Pending, Created: run.Finished}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// capString cuts s to at most n bytes, on a rune boundary.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
