package schedule

import (
	"fmt"
	"time"
)

// Place is where a job belongs and its answers go: a chat, and a forum
// topic in it (0: none). The wiring converts the session's key to it.
type Place struct {
	Chat  int64 `json:"chat"`
	Topic int   `json:"topic,omitempty"`
}

// Job is a scheduled task of one chat, as stored.
type Job struct {
	ID      string    `json:"id"`
	Place   Place     `json:"place"`
	User    int64     `json:"user"` // who asked for it
	Task    string    `json:"task"`
	Spec    Spec      `json:"spec"`
	Notify  Notify    `json:"notify"`
	Created time.Time `json:"created"`
	// Next is the slot the job runs at next; zero: none (a one-off job
	// that has started).
	Next time.Time `json:"next,omitzero"`
	// Done: a one-off job whose run has finished.
	Done bool `json:"done,omitempty"`
	// Paused jobs do not run; PauseReason says why (for /jobs).
	Paused      bool   `json:"paused,omitempty"`
	PauseReason string `json:"pauseReason,omitempty"`
	// LastHash and LastAnswer are the last answer sent (a watcher compares
	// the next one with it; every run is given it).
	LastHash   string `json:"lastHash,omitempty"`
	LastAnswer string `json:"lastAnswer,omitempty"`
	// LastCut: LastAnswer is the start of a longer answer.
	LastCut bool `json:"lastCut,omitempty"`
	// Errors counts the failed runs in a row; Told is set once the user
	// was told about them.
	Errors int  `json:"errors,omitempty"`
	Told   bool `json:"told,omitempty"`
	// Tokens is what all its runs used.
	Tokens int64 `json:"tokens,omitempty"`
}

// active reports whether the job still runs (counts against the limit).
func (j *Job) active() bool { return !j.Done }

// Outcome is how a run ended.
type Outcome string

const (
	Running     Outcome = ""            // started, not finished
	OK          Outcome = "ok"          // answered; the answer is delivered
	Unchanged   Outcome = "unchanged"   // a watcher's answer, same as the last sent
	Failed      Outcome = "failed"      // the runner's error
	Interrupted Outcome = "interrupted" // the bot stopped during it, twice
)

// Run is one run of a job: keyed by the job and its slot, so a slot runs
// once.
type Run struct {
	ID       string    `json:"id"`
	Job      string    `json:"job"`
	Place    Place     `json:"place"`
	Slot     time.Time `json:"slot"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Attempt is 1, or 2 when the bot stopped during the first.
	Attempt int     `json:"attempt"`
	Late    bool    `json:"late,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	Tokens  int     `json:"tokens,omitempty"`
	Answer  string  `json:"answer,omitempty"` // its start (2 KiB)
	Error   string  `json:"error,omitempty"`  // for the operator
}

// runID is the key of a job's run at slot.
func runID(job string, slot time.Time) string {
	return fmt.Sprintf("%s@%d", job, slot.Unix())
}

// DeliveryState is where a delivery stands.
type DeliveryState string

const (
	Pending   DeliveryState = "pending"
	Delivered DeliveryState = "delivered"
	// Refused: the chat is gone (a permanent error); not tried again.
	Refused DeliveryState = "failed-permanent"
)

// Delivery is a text a run left for its chat, recorded apart from the
// run: the run is done once, its delivery is tried until it arrives.
type Delivery struct {
	ID    string        `json:"id"` // the run's
	Job   string        `json:"job"`
	Place Place         `json:"place"`
	Text  string        `json:"text"`
	State DeliveryState `json:"state"`
	// Text is emptied once the delivery is settled.
	// Attempts counts the tries; Sent the parts of a long text already in
	// the chat (a try cut short), which the next try skips.
	Attempts  int       `json:"attempts,omitempty"`
	Sent      int       `json:"sent,omitempty"`
	LastError string    `json:"lastError,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated,omitzero"`
}

// JobView is a job with its last run and that run's delivery, for lists.
type JobView struct {
	Job      Job
	LastRun  *Run
	Delivery *Delivery
}
