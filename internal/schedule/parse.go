package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Notify says which answers of a job's runs are sent.
type Notify string

const (
	// Always sends every run's answer (the default).
	Always Notify = "always"
	// Changed sends the first answer, then only answers that differ from
	// the last one sent, with what changed first: a watcher.
	Changed Notify = "changed"
)

// Request is a job as the model asks for it (the schedule tool's
// arguments) and the chat's zone.
type Request struct {
	Task   string
	In     string // a Go duration: 90s, 2h
	At     string // "2026-12-05 08:00" in Zone, or RFC 3339
	Every  string // a Go duration, at least the minimum interval
	Cron   string // five fields
	Notify string // always (default) or changed
	Zone   string // IANA name; "" is UTC
}

// Refusal is a request refused: Reason says why in words the model can
// relay to the user; Field names the argument at fault ("" for the
// chat's limit). Match it with errors.As.
type Refusal struct {
	Field  string
	Reason string
}

func (e *Refusal) Error() string {
	if e.Field == "" {
		return "schedule refused: " + e.Reason
	}
	return "schedule refused: " + e.Field + ": " + e.Reason
}

// UserMessage is what the user (or the model) is told.
func (e *Refusal) UserMessage() string { return e.Reason }

func refuse(field, format string, args ...any) error {
	return &Refusal{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// maxSpecLen bounds each of in, at, every and cron.
const maxSpecLen = 100

// maxTaskRunes bounds a task's text: it is the message of every run.
const maxTaskRunes = 2000

// localLayouts are the forms of `at` read in the chat's zone.
var localLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"}

// Parse validates r at now under the limits of o and returns its
// schedule and notify setting, or a *Refusal. It does not count the
// chat's jobs (the Scheduler does).
func Parse(r Request, now time.Time, o Options, zones *Zones) (Spec, Notify, error) {
	o = o.withDefaults()
	notify, err := parseNotify(r.Notify)
	if err != nil {
		return Spec{}, "", err
	}
	task := strings.TrimSpace(r.Task)
	switch {
	case task == "":
		return Spec{}, "", refuse("task", "say what to do at each run")
	case utf8.RuneCountInString(task) > maxTaskRunes:
		return Spec{}, "", refuse("task", "the task is longer than %d characters", maxTaskRunes)
	}
	loc, err := zones.Load(r.Zone)
	if err != nil {
		return Spec{}, "", refuse("zone", "%q is not a time zone; use an Area/City name such as Europe/Berlin", r.Zone)
	}
	zone := loc.String()
	given := 0
	for _, v := range []string{r.In, r.At, r.Every, r.Cron} {
		if len(v) > maxSpecLen {
			return Spec{}, "", refuse("", "a schedule is at most %d characters", maxSpecLen)
		}
		if strings.TrimSpace(v) != "" {
			given++
		}
	}
	if given != 1 {
		return Spec{}, "", refuse("", "give exactly one of in, at, every or cron (got %d)", given)
	}
	var spec Spec
	switch {
	case strings.TrimSpace(r.In) != "":
		spec, err = parseIn(strings.TrimSpace(r.In), now, o)
	case strings.TrimSpace(r.At) != "":
		spec, err = parseAt(strings.TrimSpace(r.At), now, loc, o)
	case strings.TrimSpace(r.Every) != "":
		spec, err = parseEvery(strings.TrimSpace(r.Every), now, o)
	default:
		spec, err = parseCron(strings.Join(strings.Fields(r.Cron), " "), now, loc, o)
	}
	if err != nil {
		return Spec{}, "", err
	}
	spec.Zone = zone
	return spec, notify, nil
}

func parseNotify(s string) (Notify, error) {
	switch Notify(strings.TrimSpace(s)) {
	case "", Always:
		return Always, nil
	case Changed:
		return Changed, nil
	}
	return "", refuse("notify", "notify is always or changed, not %q", s)
}

func parseIn(s string, now time.Time, o Options) (Spec, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return Spec{}, refuse("in", "%q is not a duration; write it like 90s, 45m or 2h", s)
	case d <= 0:
		return Spec{}, refuse("in", "the delay must be positive")
	case d > o.MaxAhead:
		return Spec{}, refuse("in", "the delay is more than %s", human(o.MaxAhead))
	}
	return Spec{Kind: Once, At: now.Add(d).Truncate(time.Second), Text: "in " + s}, nil
}

func parseAt(s string, now time.Time, loc *time.Location, o Options) (Spec, error) {
	t, err := time.Parse(time.RFC3339, s)
	for _, layout := range localLayouts {
		if err == nil {
			break
		}
		t, err = time.ParseInLocation(layout, s, loc)
	}
	switch {
	case err != nil:
		return Spec{}, refuse("at", "%q is not a date-time; write it like 2026-12-05 08:00 (in the chat's time zone) or in RFC 3339", s)
	case !t.After(now):
		return Spec{}, refuse("at", "%s is in the past (it is now %s)", t.In(loc).Format("2006-01-02 15:04 MST"), now.In(loc).Format("2006-01-02 15:04 MST"))
	case t.Sub(now) > o.MaxAhead:
		return Spec{}, refuse("at", "%s is more than %s ahead", s, human(o.MaxAhead))
	}
	return Spec{Kind: Once, At: t.In(loc), Text: "at " + s}, nil
}

func parseEvery(s string, now time.Time, o Options) (Spec, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return Spec{}, refuse("every", "%q is not a duration; write it like 30m, 2h or 24h", s)
	case d < o.MinInterval:
		return Spec{}, refuse("every", "%s is more often than the minimum interval of %s", s, human(o.MinInterval))
	case d > o.MaxAhead:
		return Spec{}, refuse("every", "the interval is more than %s", human(o.MaxAhead))
	}
	return Spec{Kind: Every, Every: d, Anchor: now.Truncate(time.Second), Text: "every " + s}, nil
}

func parseCron(s string, now time.Time, loc *time.Location, o Options) (Spec, error) {
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return Spec{}, refuse("cron", "give the time zone apart, not in the expression")
	}
	if _, err := cronParser.Parse(s); err != nil {
		return Spec{}, refuse("cron", "%q is not a five-field cron expression (minute hour day-of-month month day-of-week): %s", s, cronReason(err))
	}
	spec := Spec{Kind: Cron, Cron: s, Text: "cron " + s}
	// The shortest gap between its next runs bounds how often it runs.
	t := now
	prev := time.Time{}
	for range 60 {
		next := cronNext(s, t, loc)
		if next.IsZero() {
			if prev.IsZero() {
				return Spec{}, refuse("cron", "%q never runs", s)
			}
			break
		}
		if !prev.IsZero() && next.Sub(prev) < o.MinInterval {
			return Spec{}, refuse("cron", "%q runs more often than the minimum interval of %s", s, human(o.MinInterval))
		}
		prev, t = next, next
	}
	return spec, nil
}

// cronReason is robfig/cron's error without its own prefixes.
func cronReason(err error) string {
	msg := err.Error()
	if u := errors.Unwrap(err); u != nil {
		msg = u.Error()
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

// human writes d without trailing zero units: 1m, 2h, 400d.
func human(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
