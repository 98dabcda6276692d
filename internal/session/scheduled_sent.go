package session

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// What the chat's scheduled tasks sent lately is in the system prompt of
// its own turns: a run is a turn apart (scheduled.go), so without this a
// user who answers a morning digest ("tell me more about the third")
// would be answered by a model that never saw it. It is read from the
// scheduler's record of each job's last answer sent, so it needs no
// change to the conversation, survives a restart, and changes the prompt
// (and its cache) only when a delivery lands or ages out.
const (
	// sentWithin is how long an answer that was sent stays in the prompt.
	sentWithin = 24 * time.Hour
	// sentShown is how many such answers, the latest first.
	sentShown = 3
	// sentAnswer and sentTask bound an answer and a task as shown.
	sentAnswer = 1500
	sentTask   = 200
)

// sentByTasks is the system prompt's part on the answers place's
// scheduled tasks sent within sentWithin before now; "" when none.
func (m *Manager) sentByTasks(place chat.Place, now time.Time) string {
	if m.sched == nil {
		return ""
	}
	var sent []schedule.JobView
	for _, v := range m.sched.List(placeOf(place)) {
		d := v.Delivery
		if d == nil || d.State != schedule.Delivered || v.Job.LastAnswer == "" {
			continue
		}
		if at := deliveredAt(d); now.Sub(at) <= sentWithin && !at.After(now.Add(time.Minute)) {
			sent = append(sent, v)
		}
	}
	if len(sent) == 0 {
		return ""
	}
	slices.SortFunc(sent, func(a, b schedule.JobView) int { return deliveredAt(b.Delivery).Compare(deliveredAt(a.Delivery)) })
	zone, _ := m.Zone(place)
	var b strings.Builder
	b.WriteString("## Sent by scheduled tasks\nThese answers of the chat's scheduled tasks were sent to it as " +
		"messages of their own; the user may be answering one.")
	for _, v := range sent[:min(len(sent), sentShown)] {
		answer := m.o.Redactor.Redact(v.Job.LastAnswer)
		cut := len(answer) > sentAnswer || v.Job.LastCut
		answer = truncateRunes(answer, sentAnswer)
		fmt.Fprintf(&b, "\n\n- %s, task %s (%s)%s:\n%s", m.zones().Format(deliveredAt(v.Delivery), zone), v.Job.ID,
			truncateRunes(m.o.Redactor.Redact(v.Job.Task), sentTask), pick(cut, ", its start", ""), answer)
	}
	return b.String()
}

// deliveredAt is when d was settled (its last change).
func deliveredAt(d *schedule.Delivery) time.Time { return cmp.Or(d.Updated, d.Created) }
