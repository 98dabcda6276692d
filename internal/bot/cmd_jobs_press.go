package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// jobsPressed settles a press of a /jobs button (onListPress has refused
// strangers): in a group only the job's creator or an admin may act, in
// /jobs all only an admin. It answers the press and edits the list to
// the jobs as they are now.
func (b *Bot) jobsPressed(ctx context.Context, place chat.Place, msgID int, cqID string, user int64, data string) {
	if b.o.Jobs == nil {
		b.answerPress(ctx, place, cqID, jobsOff, true)
		return
	}
	action, id, _ := strings.Cut(strings.TrimPrefix(data, jobPrefix), ":")
	answer, refused := b.jobAction(place, user, action, id)
	b.answerPress(ctx, place, cqID, answer, refused)
	if refused || msgID == 0 {
		return
	}
	text, kb := b.jobsMessage(place, action == "a")
	b.editList(ctx, place, msgID, "/jobs", text, kb)
}

// jobAction does action (c cancel, r run now, u resume, a cancel any) on
// job id of place for user, and says what was done. /jobs cancel <id>
// uses it too. refused: user may not.
func (b *Bot) jobAction(place chat.Place, user int64, action, id string) (text string, refused bool) {
	jp := schedule.Place{Chat: place.Chat, Topic: place.Topic}
	if action == "a" {
		if !b.access.isAdmin(user) {
			return "Only an admin of this bot (TELEGRAM_ADMINS) can cancel another chat's task.", true
		}
		job, err := b.o.Jobs.CancelAny(id)
		return b.jobDone(place, user, "cancelled", job, err), false
	}
	var job *schedule.Job
	for _, v := range b.o.Jobs.List(jp) {
		if v.Job.ID == id {
			job = &v.Job
		}
	}
	switch {
	case job == nil:
		return jobGone, false
	case place.Chat < 0 && job.User != user && !b.access.isAdmin(user): // a group: its creator or an admin
		return jobsMay, true
	}
	switch action {
	case "c":
		j, err := b.o.Jobs.Cancel(jp, id)
		return b.jobDone(place, user, "cancelled", j, err), false
	case "r":
		if err := b.o.Jobs.RunNow(jp, id); err != nil {
			return b.jobDone(place, user, "", *job, err), false
		}
		b.log.Info("/jobs: run now", "chat", place, "user", user, "job", id)
		return "Running " + id + " now; its answer comes here.", false
	case "u":
		j, err := b.o.Jobs.Resume(jp, id)
		return b.jobDone(place, user, "resumed", j, err), false
	}
	return jobGone, false
}

// jobDone says what became of job: done (cancelled, resumed), or err.
func (b *Bot) jobDone(place chat.Place, user int64, done string, job schedule.Job, err error) string {
	var refusal *schedule.Refusal
	switch {
	case errors.Is(err, schedule.ErrNotFound):
		return jobGone
	case errors.As(err, &refusal):
		return "Not now: " + refusal.Reason + "."
	case err != nil:
		b.log.Error("/jobs: the task is not changed", "chat", place, "err", errText(b.scrub, err))
		return "Sorry, I could not change that task. The operator has the details in the log."
	}
	b.log.Info("/jobs: "+done, "chat", place, "user", user, "job", job.ID)
	return strings.ToUpper(done[:1]) + done[1:] + " " + job.ID + " (" + job.Spec.Text + ")."
}
