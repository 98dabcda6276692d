package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// The built-in schedule tool: the model makes, lists and cancels the
// chat's scheduled tasks (internal/schedule runs them; scheduled.go is
// their turn). It is offered only when the manager has a Scheduler.

// ScheduleToolName is the built-in schedule tool's name; MCP tools may not
// take it.
const ScheduleToolName = "schedule"

const scheduleDescription = "Do a task later or repeatedly in this chat. create: task (self-contained) and one of " +
	"in (90s, 2h), at (local YYYY-MM-DD HH:MM), every (≥1m), cron (5 fields); notify changed: send only answers that " +
	"changed (watchers). list; cancel with id."

var scheduleSchema = json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["create","list","cancel"]},"task":{"type":"string"},"in":{"type":"string"},"at":{"type":"string"},"every":{"type":"string"},"cron":{"type":"string"},"notify":{"type":"string","enum":["always","changed"]},"id":{"type":"string"}},"additionalProperties":false}`)

// Scheduler is what the sessions need of the scheduler
// (*schedule.Scheduler satisfies it).
type Scheduler interface {
	Create(place schedule.Place, user int64, r schedule.Request) (schedule.Job, error)
	Cancel(place schedule.Place, id string) (schedule.Job, error)
	List(place schedule.Place) []schedule.JobView
	Zones() *schedule.Zones
}

// SetScheduler gives the sessions the scheduler (the schedule tool, the
// zones /tz checks). Call it once, before the first message: the
// scheduler is built after the manager, whose RunJob it calls.
func (m *Manager) SetScheduler(s Scheduler) { m.sched = s }

// zones is the zone cache: the scheduler's, or the manager's own.
func (m *Manager) zones() *schedule.Zones {
	if m.sched != nil {
		return m.sched.Zones()
	}
	return &m.ownZones
}

// placeOf is a session's place as the scheduler keeps it.
func placeOf(p chat.Place) schedule.Place { return schedule.Place{Chat: p.Chat, Topic: p.Topic} }

type scheduleArgs struct {
	Action string `json:"action"`
	Task   string `json:"task"`
	In     string `json:"in"`
	At     string `json:"at"`
	Every  string `json:"every"`
	Cron   string `json:"cron"`
	Notify string `json:"notify"`
	ID     string `json:"id"`
}

// scheduleArguments decodes the tool's arguments, or returns the error
// text for the model. The schedule itself is judged by schedule.Parse.
func scheduleArguments(raw json.RawMessage) (scheduleArgs, string) {
	obj, problem := callArguments(ScheduleToolName, raw)
	if problem != "" {
		return scheduleArgs{}, problem
	}
	var a scheduleArgs
	if err := json.Unmarshal(obj, &a); err != nil {
		return scheduleArgs{}, "invalid arguments for " + ScheduleToolName + ": every argument is a string"
	}
	a.Action = strings.ToLower(strings.TrimSpace(a.Action))
	switch {
	case a.Action == "":
		a.Action = "create"
	case a.Action != "create" && a.Action != "list" && a.Action != "cancel":
		return scheduleArgs{}, "invalid arguments for " + ScheduleToolName + ": action must be create, list or cancel"
	}
	switch {
	case a.Action == "create" && strings.TrimSpace(a.Task) == "":
		return scheduleArgs{}, "invalid arguments for " + ScheduleToolName + ": create needs task, what to do in the user's words"
	case a.Action == "cancel" && strings.TrimSpace(a.ID) == "":
		return scheduleArgs{}, "invalid arguments for " + ScheduleToolName + ": cancel needs the job's id (action list shows them)"
	}
	return a, ""
}

// scheduleTool is schedule; unattended: in a scheduled run, which may
// list and cancel but not create (a task that schedules tasks would
// multiply).
type scheduleTool struct {
	s          *session
	unattended bool
}

func (scheduleTool) Spec() chat.Spec {
	return chat.Spec{Name: ScheduleToolName, Description: scheduleDescription, Schema: scheduleSchema}
}

func (scheduleTool) Lane() string { return ScheduleToolName }

// Deferred: the tool is listed by name and loaded with tool_search.
func (scheduleTool) Deferred() bool { return true }

func (scheduleTool) Check(args json.RawMessage) (json.RawMessage, error) {
	return checkWith(args, scheduleArguments)
}

func (t scheduleTool) Call(_ context.Context, args json.RawMessage) (chat.Result, error) {
	return callWith(args, scheduleArguments, t.call), nil
}

func (t scheduleTool) call(a scheduleArgs) (string, error) {
	s := t.s
	sched := s.m.sched
	if sched == nil {
		return "", errors.New("scheduled tasks are not available here")
	}
	place := placeOf(s.id)
	switch a.Action {
	case "list":
		return scheduleList(sched.List(place), sched.Zones()), nil
	case "cancel":
		job, err := sched.Cancel(place, strings.TrimSpace(a.ID))
		if errors.Is(err, schedule.ErrNotFound) {
			return "", fmt.Errorf("this chat has no job %s; action list shows its jobs", strings.TrimSpace(a.ID))
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("cancelled %s (%s)", job.ID, job.Spec.Text), nil
	}
	if t.unattended {
		return "", errors.New("a scheduled run cannot schedule more tasks; tell the user what to schedule instead")
	}
	return t.create(sched, place, a)
}

// create makes the job in the chat's zone and answers with its id and
// next run there; a refusal's reason is the model's to relay.
func (t scheduleTool) create(sched Scheduler, place schedule.Place, a scheduleArgs) (string, error) {
	s := t.s
	zone, err := s.m.Zone(s.id)
	if err != nil {
		s.m.logger.Warn("the chat's time zone is not read: its default is used", "chat", s.id, "err", err)
	}
	s.mu.Lock()
	user := s.turnUser
	s.mu.Unlock()
	job, err := sched.Create(place, user, schedule.Request{Task: a.Task, In: a.In, At: a.At, Every: a.Every,
		Cron: a.Cron, Notify: a.Notify, Zone: zone})
	var refusal *schedule.Refusal
	if errors.As(err, &refusal) {
		return "", errors.New("refused: " + refusal.Reason)
	}
	if err != nil {
		s.m.logger.Error("a scheduled task is not saved", "chat", s.id, "err", err)
		return "", errors.New("the task could not be saved (the operator has the details in the log)")
	}
	return fmt.Sprintf("scheduled %s (%s, notify %s); next run %s. The user sees it in /jobs.",
		job.ID, job.Spec.Text, job.Notify, sched.Zones().Format(job.Next, job.Spec.Zone)), nil
}

// scheduleList is the chat's jobs for the model, one line each.
func scheduleList(views []schedule.JobView, zones *schedule.Zones) string {
	if len(views) == 0 {
		return "no scheduled tasks in this chat"
	}
	var b strings.Builder
	for _, v := range views {
		j := v.Job
		fmt.Fprintf(&b, "%s: %s — %s", j.ID, j.Spec.Text, oneLine(j.Task, 120))
		switch {
		case j.Paused:
			fmt.Fprintf(&b, " (paused: %s)", j.PauseReason)
		case j.Done:
			b.WriteString(" (done)")
		default:
			fmt.Fprintf(&b, " (next %s)", zones.Format(j.Next, j.Spec.Zone))
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
