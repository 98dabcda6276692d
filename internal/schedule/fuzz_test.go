package schedule

import (
	"errors"
	"testing"
	"time"
)

// FuzzParse: whatever the model sends, Parse answers a spec whose next
// run is ahead, or a refusal; it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"90s", "2h", "0 8 * * 1-5", "@daily", "2026-12-05 08:00", "*/0 * * * *", "0 0 31 2 *", "@every 1ms"} {
		f.Add(s, "Europe/Berlin")
	}
	zones := &Zones{}
	f.Fuzz(func(t *testing.T, v, zone string) {
		for i, r := range []Request{{In: v}, {At: v}, {Every: v}, {Cron: v}} {
			r.Task, r.Zone = "x", zone
			spec, _, err := Parse(r, now0, Options{}, zones)
			var ref *Refusal
			if err != nil {
				if !errors.As(err, &ref) {
					t.Fatalf("%d %q: %v is no refusal", i, v, err)
				}
				continue
			}
			next := spec.Next(now0, zones.loc(spec.Zone))
			if !next.After(now0) || next.Sub(now0) > 400*24*time.Hour+time.Minute && spec.Kind != Cron {
				t.Fatalf("%d %q: next %v", i, v, next)
			}
		}
	})
}
