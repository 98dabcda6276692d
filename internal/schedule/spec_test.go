package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var now0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseAccepts(t *testing.T) {
	berlin := mustLoc(t, "Europe/Berlin")
	tests := []struct {
		name string
		r    Request
		kind Kind
		next time.Time // the first run after now0
		text string
	}{
		{"in", Request{In: "90s"}, Once, now0.Add(90 * time.Second), "in 90s"},
		{"in hours", Request{In: "2h"}, Once, now0.Add(2 * time.Hour), "in 2h"},
		{"at local", Request{At: "2026-12-05 08:00", Zone: "Europe/Berlin"}, Once,
			time.Date(2026, 12, 5, 8, 0, 0, 0, berlin), "at 2026-12-05 08:00"},
		{"at local seconds", Request{At: "2026-12-05T08:00:30"}, Once,
			time.Date(2026, 12, 5, 8, 0, 30, 0, time.UTC), "at 2026-12-05T08:00:30"},
		{"at rfc3339", Request{At: "2026-12-05T08:00:00-05:00", Zone: "Europe/Berlin"}, Once,
			time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC), "at 2026-12-05T08:00:00-05:00"},
		{"every", Request{Every: "2h"}, Every, now0.Add(2 * time.Hour), "every 2h"},
		{"every minimum", Request{Every: "1m"}, Every, now0.Add(time.Minute), "every 1m"},
		{"cron", Request{Cron: "0 8 * * *", Zone: "Europe/Berlin"}, Cron,
			time.Date(2026, 12, 4, 8, 0, 0, 0, berlin), "cron 0 8 * * *"},
		{"cron spaces", Request{Cron: "  0  8 * *   1-5 "}, Cron,
			time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC), "cron 0 8 * * 1-5"},
		{"cron descriptor", Request{Cron: "@daily"}, Cron, time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), "cron @daily"},
		{"cron every minute", Request{Cron: "* * * * *"}, Cron, now0.Add(time.Minute), "cron * * * * *"},
	}
	zones := &Zones{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Task = "check the news"
			spec, notify, err := Parse(tt.r, now0, Options{}, zones)
			if err != nil {
				t.Fatal(err)
			}
			next := spec.Next(now0, zones.loc(spec.Zone))
			if spec.Kind != tt.kind || !next.Equal(tt.next) || spec.Text != tt.text || notify != Always {
				t.Errorf("got %s next %v %q %s, want %s next %v %q", spec.Kind, next, spec.Text, notify, tt.kind, tt.next, tt.text)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name   string
		r      Request
		field  string
		reason string // a part of the reason
	}{
		{"cron with 7 fields", Request{Cron: "0 0 8 * * * 2026"}, "cron", "five-field"},
		{"cron with 6 fields", Request{Cron: "0 0 8 * * *"}, "cron", "expected exactly 5 fields"},
		{"cron nonsense", Request{Cron: "61 * * * *"}, "cron", "not a five-field"},
		{"cron never", Request{Cron: "0 0 30 2 *"}, "cron", "never runs"},
		{"cron zone inside", Request{Cron: "CRON_TZ=Asia/Tokyo 0 8 * * *"}, "cron", "time zone apart"},
		{"cron too often", Request{Cron: "@every 10s"}, "cron", "minimum interval of 1m"},
		{"every 1s", Request{Every: "1s"}, "every", "minimum interval of 1m"},
		{"every 59s", Request{Every: "59s"}, "every", "minimum interval"},
		{"every words", Request{Every: "daily"}, "every", "not a duration"},
		{"every too long", Request{Every: "10000h"}, "every", "more than 400d"},
		{"at in the past", Request{At: "2026-12-03 09:59"}, "at", "in the past"},
		{"at now", Request{At: "2026-12-03T10:00:00Z"}, "at", "in the past"},
		{"at garbage", Request{At: "friday"}, "at", "not a date-time"},
		{"at too far", Request{At: "2030-01-01 00:00"}, "at", "ahead"},
		{"in negative", Request{In: "-5m"}, "in", "positive"},
		{"in zero", Request{In: "0s"}, "in", "positive"},
		{"in words", Request{In: "soon"}, "in", "not a duration"},
		{"unknown zone", Request{In: "1h", Zone: "Mars/Olympus"}, "zone", "not a time zone"},
		{"host zone", Request{In: "1h", Zone: "Local"}, "zone", "not a time zone"},
		{"path zone", Request{In: "1h", Zone: "../../etc/passwd"}, "zone", "not a time zone"},
		{"none", Request{}, "", "exactly one of"},
		{"two", Request{In: "1h", Every: "2h"}, "", "exactly one of"},
		{"notify", Request{In: "1h", Notify: "sometimes"}, "notify", "always or changed"},
		{"no task", Request{In: "1h", Task: " "}, "task", "say what"},
		{"long task", Request{In: "1h", Task: strings.Repeat("x", maxTaskRunes+1)}, "task", "longer than"},
		{"long cron", Request{Cron: strings.Repeat("* ", 51)}, "", "at most 100 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.Task == "" {
				tt.r.Task = "check the news"
			}
			_, _, err := Parse(tt.r, now0, Options{}, &Zones{})
			var ref *Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if ref.Field != tt.field || !strings.Contains(ref.Reason, tt.reason) {
				t.Errorf("got %q: %q, want %q: …%q…", ref.Field, ref.Reason, tt.field, tt.reason)
			}
		})
	}
}

// TestParseMinInterval: a lowered minimum (tests, SCHEDULE_MIN_INTERVAL_SECONDS)
// admits what the default refuses, and a raised one refuses a cron
// expression by its shortest gap.
func TestParseMinInterval(t *testing.T) {
	tests := []struct {
		r   Request
		min time.Duration
		ok  bool
	}{
		{Request{Every: "1s"}, time.Second, true},
		{Request{Every: "1s"}, 0, false},
		{Request{Cron: "*/5 * * * *"}, 5 * time.Minute, true},
		{Request{Cron: "*/5 * * * *"}, 6 * time.Minute, false},
		{Request{Cron: "0,10 8 * * *"}, 15 * time.Minute, false}, // two runs 10m apart each day
	}
	for _, tt := range tests {
		tt.r.Task = "x"
		_, _, err := Parse(tt.r, now0, Options{MinInterval: tt.min}, &Zones{})
		if (err == nil) != tt.ok {
			t.Errorf("%+v min %v: got %v, want ok=%v", tt.r, tt.min, err, tt.ok)
		}
	}
}

// TestNextFollowsDaylightSaving: a cron time stays on the wall clock
// across a change of the clocks, a time in the skipped hour runs at the
// change, a time in the repeated hour runs once (an hourly one in both),
// and every is an absolute interval.
func TestNextFollowsDaylightSaving(t *testing.T) {
	tests := []struct {
		name, zone string
		spec       Spec
		from       string // RFC 3339
		want       []string
	}{
		{"berlin 8:00 into summer", "Europe/Berlin", Spec{Kind: Cron, Cron: "0 8 * * *"}, "2026-03-28T09:00:00+01:00",
			[]string{"2026-03-29T08:00:00+02:00", "2026-03-30T08:00:00+02:00"}},
		{"berlin 8:00 into winter", "Europe/Berlin", Spec{Kind: Cron, Cron: "0 8 * * *"}, "2026-10-24T09:00:00+02:00",
			[]string{"2026-10-25T08:00:00+01:00", "2026-10-26T08:00:00+01:00"}},
		{"berlin skipped 2:30", "Europe/Berlin", Spec{Kind: Cron, Cron: "30 2 * * *"}, "2026-03-28T03:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin repeated 2:30", "Europe/Berlin", Spec{Kind: Cron, Cron: "30 2 * * *"}, "2026-10-24T03:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin hourly in the repeated hour", "Europe/Berlin", Spec{Kind: Cron, Cron: "0 * * * *"}, "2026-10-25T01:30:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},
		{"new york 9:15 into summer", "America/New_York", Spec{Kind: Cron, Cron: "15 9 * * *"}, "2026-03-07T10:00:00-05:00",
			[]string{"2026-03-08T09:15:00-04:00"}},
		{"new york skipped 2:30", "America/New_York", Spec{Kind: Cron, Cron: "30 2 * * *"}, "2026-03-07T03:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"new york repeated 1:30", "America/New_York", Spec{Kind: Cron, Cron: "30 1 * * *"}, "2026-10-31T02:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"new york every 24h is absolute", "America/New_York",
			Spec{Kind: Every, Every: 24 * time.Hour, Anchor: time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC)},
			"2026-10-31T12:00:00Z", []string{"2026-11-01T08:00:00-04:00", "2026-11-02T07:00:00-05:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustLoc(t, tt.zone)
			at, err := time.Parse(time.RFC3339, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.want {
				want, _ := time.Parse(time.RFC3339, w)
				at = tt.spec.Next(at, loc)
				if !at.Equal(want) {
					t.Fatalf("run %d: got %v, want %v", i+1, at, want.In(loc))
				}
			}
		})
	}
}

func TestZones(t *testing.T) {
	z := &Zones{}
	for _, name := range []string{"", "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"} {
		if _, err := z.Load(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	for _, name := range []string{"Local", "Nowhere/Town", "europe/berlin", strings.Repeat("A", 65)} {
		if _, err := z.Load(name); err == nil {
			t.Errorf("%q loaded", name)
		}
	}
	if z.loc("Gone/Zone") != time.UTC {
		t.Error("an unknown stored zone is not UTC")
	}
	// A time read back from JSON has a fixed offset: Format names the zone.
	fixed := time.Date(2026, 12, 5, 8, 0, 0, 0, time.FixedZone("", 3600))
	if got := z.Format(fixed, "Europe/Berlin"); got != "Sat 5 Dec 2026 08:00 CET" {
		t.Errorf("format: %q", got)
	}
	if z.Format(time.Time{}, "UTC") != "" {
		t.Error("zero time formatted")
	}
}
