package bot

import (
	"context"
	"fmt"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// Jobs is what the bot needs of the scheduler (*schedule.Scheduler
// satisfies it): /jobs and its buttons.
type Jobs interface {
	List(place schedule.Place) []schedule.JobView
	All() []schedule.JobView
	Cancel(place schedule.Place, id string) (schedule.Job, error)
	CancelAny(id string) (schedule.Job, error)
	Resume(place schedule.Place, id string) (schedule.Job, error)
	RunNow(place schedule.Place, id string) error
	Zones() *schedule.Zones
}

// The data of /jobs' buttons: "job:<action>:<id>", action c (cancel), r
// (run now), u (resume), and a (cancel from /jobs all, admins). A press
// is settled against the jobs as they are when it comes: the buttons keep
// no state, and data a client makes up can do no more than the presser
// may do with /jobs.
const jobPrefix = "job:"

// jobsListJobs bounds the jobs one /jobs message lists (and has buttons
// for): a chat has at most SCHEDULE_MAX_JOBS_PER_CHAT that run, /jobs all
// may have many more.
const jobsListJobs = 30

const (
	noJobs   = "No scheduled tasks in this chat. Ask me to do something later or repeatedly (\"every morning at 8, …\", \"tell me when … changes\") and I schedule it."
	jobsOff  = "Scheduled tasks are not set up in this bot."
	jobsMay  = "Only the one who scheduled this task, or an admin of this bot, can change it."
	jobGone  = "That task is gone already."
	jobsHelp = "/jobs lists this chat's scheduled tasks with buttons; /jobs cancel <id> cancels one; /jobs all (admins) lists every chat's."
)

// cmdJobs is /jobs, /jobs cancel <id> and /jobs all.
func (b *Bot) cmdJobs(ctx context.Context, place chat.Place, from int64, args []string) {
	if b.o.Jobs == nil {
		b.reply(ctx, place, jobsOff)
		return
	}
	switch {
	case len(args) == 0:
		b.sendJobs(ctx, place, false)
	case len(args) == 1 && strings.EqualFold(args[0], "all"):
		if !b.access.isAdmin(from) {
			b.reply(ctx, place, "Only an admin of this bot (TELEGRAM_ADMINS) can see every chat's tasks.")
			return
		}
		b.sendJobs(ctx, place, true)
	case len(args) == 2 && strings.EqualFold(args[0], "cancel"):
		text, _ := b.jobAction(place, from, "c", args[1])
		b.reply(ctx, place, text)
	default:
		b.reply(ctx, place, jobsHelp)
	}
}

// sendJobs sends the list of place's jobs (all: every chat's) with its
// buttons.
func (b *Bot) sendJobs(ctx context.Context, place chat.Place, all bool) {
	text, kb := b.jobsMessage(place, all)
	if _, err := telegram.Send(ctx, b.tg, place.Chat, "sendMessage", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return b.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: place.Chat, MessageThreadID: place.Topic,
			Text: text, LinkPreviewOptions: noPreview, ReplyMarkup: kb})
	}); err != nil {
		b.log.Error("message not delivered", "chat", place, "err", err.Error())
	}
}

// jobsMessage is the /jobs text (plain, scrubbed) and its keyboard (nil
// without jobs).
func (b *Bot) jobsMessage(place chat.Place, all bool) (string, models.ReplyMarkup) {
	views := b.o.Jobs.List(schedule.Place{Chat: place.Chat, Topic: place.Topic})
	head := "Scheduled tasks in this chat:\n"
	if all {
		views, head = b.o.Jobs.All(), "Scheduled tasks of every chat (you are an admin):\n"
	}
	if len(views) == 0 {
		return noJobs, nil
	}
	var s strings.Builder
	s.WriteString(head)
	kb := &models.InlineKeyboardMarkup{}
	for i, v := range views {
		if i == jobsListJobs {
			fmt.Fprintf(&s, "… and %d more.\n", len(views)-i)
			break
		}
		s.WriteString(jobLines(v, b.o.Jobs.Zones(), all))
		kb.InlineKeyboard = append(kb.InlineKeyboard, jobButtons(v.Job, all))
	}
	s.WriteString("Cancel ends a task; Run now runs it at once, apart from its schedule.")
	return truncate(b.scrub(s.String()), 4000), kb
}

// jobLines is one job in /jobs: task, schedule, next run, last run with
// its delivery and the tokens it used.
func jobLines(v schedule.JobView, zones *schedule.Zones, all bool) string {
	j := v.Job
	var s strings.Builder
	where := ""
	if all {
		where = fmt.Sprintf(" [chat %d", j.Place.Chat)
		if j.Place.Topic != 0 {
			where += fmt.Sprintf(" topic %d", j.Place.Topic)
		}
		where += "]"
	}
	fmt.Fprintf(&s, "• %s%s — %s", j.ID, where, j.Spec.Text)
	if j.Notify == schedule.Changed {
		s.WriteString(", when it changes")
	}
	fmt.Fprintf(&s, ": %s\n", truncate(strings.Join(strings.Fields(j.Task), " "), 100))
	switch {
	case j.Paused:
		fmt.Fprintf(&s, "  paused: %s\n", j.PauseReason)
	case j.Done:
		s.WriteString("  done\n")
	case !j.Next.IsZero():
		fmt.Fprintf(&s, "  next: %s\n", zones.Format(j.Next, j.Spec.Zone))
	}
	if r := v.LastRun; r != nil {
		fmt.Fprintf(&s, "  last: %s, %s", zones.Format(r.Started, j.Spec.Zone), runOutcome(r))
		if d := v.Delivery; d != nil && d.ID == r.ID {
			fmt.Fprintf(&s, ", %s", deliveryState(d))
		}
		s.WriteString("\n")
	}
	if j.Tokens > 0 {
		fmt.Fprintf(&s, "  tokens used: %d\n", j.Tokens)
	}
	return s.String()
}

func runOutcome(r *schedule.Run) string {
	switch r.Outcome {
	case schedule.Running:
		return "running"
	case schedule.Unchanged:
		return "unchanged (not sent)"
	case schedule.Failed, schedule.Interrupted:
		return "failed"
	}
	if r.Late {
		return "ran late"
	}
	return "ran"
}

func deliveryState(d *schedule.Delivery) string {
	switch d.State {
	case schedule.Delivered:
		return "delivered"
	case schedule.Refused:
		return "not delivered (the chat refused it)"
	}
	if d.Attempts > 0 {
		return fmt.Sprintf("delivery pending (%d tries)", d.Attempts)
	}
	return "delivery pending"
}

// jobButtons is a job's row: Cancel and Run now, Resume when paused;
// in /jobs all, Cancel alone.
func jobButtons(j schedule.Job, all bool) []models.InlineKeyboardButton {
	if all {
		return []models.InlineKeyboardButton{{Text: "✖ Cancel " + j.ID, CallbackData: jobPrefix + "a:" + j.ID}}
	}
	row := []models.InlineKeyboardButton{
		{Text: "✖ Cancel " + j.ID, CallbackData: jobPrefix + "c:" + j.ID},
		{Text: "▶ Run now", CallbackData: jobPrefix + "r:" + j.ID},
	}
	if j.Paused {
		row = append(row, models.InlineKeyboardButton{Text: "⏯ Resume", CallbackData: jobPrefix + "u:" + j.ID})
	}
	return row
}
