package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// runJobs is `volcanicbot jobs`: every chat's scheduled tasks and their
// last runs, read from the data directory without writing (safe beside a
// running bot, which may have appended since: the last line is read only
// once whole).
func runJobs(stdout io.Writer, environ []string) error {
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return err
	}
	views, err := schedule.ReadLedger(filepath.Join(cfg.DataDir, scheduleDir))
	if err != nil {
		return fmt.Errorf("scheduled tasks: %w", err)
	}
	writeJobs(stdout, views)
	return nil
}

// writeJobs prints views as a table, one task a line.
func writeJobs(out io.Writer, views []schedule.JobView) {
	fmt.Fprintf(out, "scheduled tasks: %d\n", len(views))
	if len(views) == 0 {
		return
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CHAT\tID\tSCHEDULE\tSTATE\tNEXT (UTC)\tLAST RUN (UTC)\tDELIVERY\tTOKENS\tTASK")
	for _, v := range views {
		j := v.Job
		where := fmt.Sprint(j.Place.Chat)
		if j.Place.Topic != 0 {
			where += fmt.Sprintf("/%d", j.Place.Topic)
		}
		state := "active"
		switch {
		case j.Paused:
			state = "paused: " + j.PauseReason
		case j.Done:
			state = "done"
		}
		last, delivery := "-", "-"
		if r := v.LastRun; r != nil {
			last = utc(r.Started) + " " + cmp.Or(string(r.Outcome), "running")
		}
		if d := v.Delivery; d != nil {
			delivery = fmt.Sprintf("%s (%d tries)", d.State, d.Attempts)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", where, j.ID, j.Spec.Text, state, cmp.Or(utc(j.Next), "-"),
			last, delivery, j.Tokens, cutRunes(strings.Join(strings.Fields(j.Task), " "), 60))
	}
	w.Flush()
}

// utc is t as the table shows it; "" for none.
func utc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// cutRunes is s cut to n runes.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
