package schedule

import (
	"log/slog"
	"time"
)

// Options configure a Scheduler (and Parse). The zero value of a field is
// its default.
type Options struct {
	// MaxJobsPerChat is how many jobs a chat may have that still run
	// (SCHEDULE_MAX_JOBS_PER_CHAT); default 20.
	MaxJobsPerChat int
	// MinInterval is the shortest `every`, and the shortest gap between a
	// cron expression's runs (SCHEDULE_MIN_INTERVAL_SECONDS); default 1m.
	MinInterval time.Duration
	// MaxAhead is how far ahead `in` and `at` may be, and the longest
	// `every`; default 400 days.
	MaxAhead time.Duration
	// MaxParallel is how many runs (of different chats) may run at once;
	// default 4. A chat's runs are always one at a time.
	MaxParallel int
	// LateAfter is how long after its slot a run that starts counts as
	// late (the bot was down, or the chat busy); default 1m.
	LateAfter time.Duration
	// RunTimeout bounds one run; default 15m.
	RunTimeout time.Duration
	// DeliverTimeout bounds one delivery attempt; default 2m.
	DeliverTimeout time.Duration
	// RetryMin and RetryMax bound the wait between delivery attempts
	// (doubling from RetryMin); defaults 2s and 10m. An error's own
	// RetryAfter (a 429's retry_after) wins when longer.
	RetryMin, RetryMax time.Duration
	// ErrorsToTell is how many failed runs in a row of a recurring job tell
	// the user, once; default 3.
	ErrorsToTell int
	// MaxAnswerBytes bounds a stored and delivered answer; default 32 KiB.
	MaxAnswerBytes int
	// Logger is where the operator reads what happens; default discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxJobsPerChat <= 0 {
		o.MaxJobsPerChat = 20
	}
	def(&o.MinInterval, time.Minute)
	def(&o.MaxAhead, 400*24*time.Hour)
	if o.MaxParallel <= 0 {
		o.MaxParallel = 4
	}
	def(&o.LateAfter, time.Minute)
	def(&o.RunTimeout, 15*time.Minute)
	def(&o.DeliverTimeout, 2*time.Minute)
	def(&o.RetryMin, 2*time.Second)
	def(&o.RetryMax, 10*time.Minute)
	if o.ErrorsToTell <= 0 {
		o.ErrorsToTell = 3
	}
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = 32 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
