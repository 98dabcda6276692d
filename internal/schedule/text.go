package schedule

import (
	"fmt"
	"strings"
	"time"
)

// The user's texts the scheduler writes itself (the answers are the
// model's).

const emptyAnswerText = "(The scheduled run gave no answer.)"

const changedText = "What changed: the answer differs from the last one sent."

func lateText(slot time.Time) string {
	return fmt.Sprintf("(Late: this run was due at %s, while the bot was down or busy.)", FormatTime(slot))
}

func failedOnceText(j Job, reason string) string {
	return fmt.Sprintf("The scheduled task %s (“%s”) failed: %s.", j.ID, short(j.Task), strings.TrimSuffix(reason, "."))
}

func failingText(j Job, reason string) string {
	return fmt.Sprintf("The scheduled task %s (“%s”) failed %d times in a row; the last error: %s. "+
		"It stays scheduled; cancel it with /jobs if it should stop.", j.ID, short(j.Task), j.Errors, strings.TrimSuffix(reason, "."))
}

// FormatTime writes t in its zone as users read it: "Sat 5 Dec 2026
// 08:00 CET".
func FormatTime(t time.Time) string { return t.Format("Mon 2 Jan 2006 15:04 MST") }

// short is the start of a task, for a notice.
func short(task string) string {
	r := []rune(strings.Join(strings.Fields(task), " "))
	if len(r) <= 60 {
		return string(r)
	}
	return string(r[:59]) + "…"
}
