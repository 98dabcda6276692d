package schedule

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Kind is how a job's runs follow each other.
type Kind string

const (
	// Once runs the job at At (a request's `in` or `at`), then it is done.
	Once Kind = "once"
	// Every runs the job every Every, counted from Anchor (its creation):
	// an absolute interval, the same length across a change of the clocks.
	Every Kind = "every"
	// Cron runs the job at the wall-clock times of a five-field cron
	// expression in Zone: 8:00 stays 8:00 across daylight saving.
	Cron Kind = "cron"
)

// Spec is when a job runs: a validated schedule (Parse makes one) in its
// zone. It is stored as it is; Next is computed from it.
type Spec struct {
	Kind   Kind          `json:"kind"`
	At     time.Time     `json:"at,omitzero"`
	Every  time.Duration `json:"every,omitempty"`
	Anchor time.Time     `json:"anchor,omitzero"`
	Cron   string        `json:"cron,omitempty"`
	// Zone is the IANA name of the zone the schedule is read in ("UTC"
	// when the chat set none).
	Zone string `json:"zone"`
	// Text is the schedule as the user gave it ("every 2h", "cron 0 8 * *
	// 1-5", "at 2026-12-05 08:00"), for lists.
	Text string `json:"text"`
}

// cronParser reads exactly five fields (and the @daily-style
// descriptors); seconds are not a field.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Recurring reports whether the job runs more than once.
func (s Spec) Recurring() bool { return s.Kind != Once }

// Next is the first run strictly after after, in loc (the spec's zone,
// Zones.Load); zero when there is none (a one-off job after its time, a
// cron expression that never matches within five years).
func (s Spec) Next(after time.Time, loc *time.Location) time.Time {
	switch s.Kind {
	case Once:
		if s.At.After(after) {
			return s.At
		}
		return time.Time{}
	case Every:
		if s.Every <= 0 {
			return time.Time{}
		}
		if after.Before(s.Anchor) {
			return s.Anchor.Add(s.Every)
		}
		n := after.Sub(s.Anchor)/s.Every + 1
		return s.Anchor.Add(n * s.Every).In(loc)
	case Cron:
		return cronNext(s.Cron, after, loc)
	}
	return time.Time{}
}

// cronNext is the expression's next time after after in loc. When the
// clocks go back an hour, a time of day that happens twice (02:30 in the
// repeated hour) runs once, at its first: an expression that names its
// hours (0 8 * * *, @daily) skips the second; one that runs every hour
// (*, */2, @hourly) runs in both. When the clocks go forward, a time in the
// hour that does not exist runs at the first moment after the change
// (robfig/cron's handling; see TestNextFollowsDaylightSaving).
func cronNext(expr string, after time.Time, loc *time.Location) time.Time {
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return time.Time{}
	}
	after = after.In(loc)
	next := sched.Next(after)
	if !next.IsZero() && fixedHours(expr) && repeatedWallTime(next) {
		next = sched.Next(next)
	}
	if jump, ok := skippedRun(sched, after, next); ok {
		return jump
	}
	return next
}

// skippedRun finds a run the clocks going forward between after and next
// would skip (robfig/cron passes over a time that does not exist, to the
// next day): it is due at the moment of the change.
func skippedRun(sched cron.Schedule, after, next time.Time) (time.Time, bool) {
	t := after
	for range 4 {
		_, end := t.ZoneBounds()
		if end.IsZero() || (!next.IsZero() && !end.Before(next)) {
			return time.Time{}, false
		}
		_, offBefore := t.Zone()
		_, offAfter := end.Zone()
		if gap := time.Duration(offAfter-offBefore) * time.Second; gap > 0 {
			// The wall times [from, from+gap) do not exist: does the
			// expression name one? Asked of the same wall times in UTC.
			from := end.In(time.FixedZone("", offBefore))
			y, mo, d := from.Date()
			wall := time.Date(y, mo, d, from.Hour(), from.Minute(), 0, 0, time.UTC)
			if m := sched.Next(wall.Add(-time.Second)); m.Before(wall.Add(gap)) {
				return end, true
			}
		}
		t = end
	}
	return time.Time{}, false
}

// fixedHours reports whether expr names the hours it runs at.
func fixedHours(expr string) bool {
	f := strings.Fields(expr)
	switch {
	case len(f) == 5:
		return !strings.ContainsAny(f[1], "*/")
	case len(f) == 1:
		return f[0] != "@hourly" && !strings.HasPrefix(f[0], "@every")
	}
	return false
}

// repeatedWallTime reports whether t's wall-clock time already happened
// earlier in the same zone (t is in the hour repeated when clocks go
// back).
func repeatedWallTime(t time.Time) bool {
	_, off := t.Zone()
	_, before := t.Add(-3 * time.Hour).Zone()
	if before <= off {
		return false
	}
	earlier := t.Add(-time.Duration(before-off) * time.Second)
	return earlier.Format(time.DateTime) == t.Format(time.DateTime)
}

// Zones loads time zones once each: time.LoadLocation reads the zone
// database on every call. Safe for concurrent use; the zero value is
// ready.
type Zones struct {
	mu   sync.Mutex
	locs map[string]*time.Location
}

// Load is the zone called name; an unknown name is an error. "" is UTC;
// "Local" (the host's zone, which says nothing to a user) is refused.
func (z *Zones) Load(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if name == "Local" || len(name) > 64 {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if loc, ok := z.locs[name]; ok {
		return loc, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	if z.locs == nil {
		z.locs = make(map[string]*time.Location)
	}
	z.locs[name] = loc
	return loc, nil
}

// loc is Load for a stored spec's zone, which was valid when stored: a
// zone the host no longer knows falls back to UTC rather than stopping
// the job.
func (z *Zones) loc(name string) *time.Location {
	loc, err := z.Load(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Format writes t in zone (a stored spec's) as users read it; "" for
// the zero time.
func (z *Zones) Format(t time.Time, zone string) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t.In(z.loc(zone)))
}
