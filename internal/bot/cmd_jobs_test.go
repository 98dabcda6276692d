package bot

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// fakeJobs is the scheduler's side of /jobs: its jobs, and what was done.
type fakeJobs struct {
	mu    sync.Mutex
	jobs  []schedule.JobView
	done  []string
	zones schedule.Zones
}

func (f *fakeJobs) List(p schedule.Place) []schedule.JobView {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []schedule.JobView
	for _, v := range f.jobs {
		if v.Job.Place == p {
			out = append(out, v)
		}
	}
	return out
}

func (f *fakeJobs) All() []schedule.JobView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs)
}

func (f *fakeJobs) take(what string, id string, mine func(schedule.Job) bool, remove bool) (schedule.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, v := range f.jobs {
		if v.Job.ID == id && mine(v.Job) {
			f.done = append(f.done, what+" "+id)
			if remove {
				f.jobs = slices.Delete(f.jobs, i, i+1)
			}
			return v.Job, nil
		}
	}
	return schedule.Job{}, fmt.Errorf("%w: %s", schedule.ErrNotFound, id)
}

func (f *fakeJobs) Cancel(p schedule.Place, id string) (schedule.Job, error) {
	return f.take("cancel", id, func(j schedule.Job) bool { return j.Place == p }, true)
}

func (f *fakeJobs) CancelAny(id string) (schedule.Job, error) {
	return f.take("cancelany", id, func(schedule.Job) bool { return true }, true)
}

func (f *fakeJobs) Resume(p schedule.Place, id string) (schedule.Job, error) {
	return f.take("resume", id, func(j schedule.Job) bool { return j.Place == p }, false)
}

func (f *fakeJobs) RunNow(p schedule.Place, id string) error {
	_, err := f.take("runnow", id, func(j schedule.Job) bool { return j.Place == p }, false)
	return err
}

func (f *fakeJobs) Zones() *schedule.Zones { return &f.zones }

func (f *fakeJobs) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.done)
}

func someJobs() []schedule.JobView {
	next := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	gp := schedule.Place{Chat: group}
	every := schedule.Spec{Kind: schedule.Every, Every: time.Hour, Text: "every 1h", Zone: "Europe/Berlin"}
	return []schedule.JobView{
		{Job: schedule.Job{ID: "j1", Place: gp, User: bob, Task: "top 5 of HN", Spec: every, Next: next, Tokens: 1234},
			LastRun:  &schedule.Run{ID: "j1@1", Started: next.Add(-time.Hour), Outcome: schedule.OK},
			Delivery: &schedule.Delivery{ID: "j1@1", State: schedule.Delivered}},
		{Job: schedule.Job{ID: "j2", Place: gp, User: alice, Task: "watch the price", Spec: every, Notify: schedule.Changed,
			Paused: true, PauseReason: "the bot can no longer write to this chat"}},
		{Job: schedule.Job{ID: "j3", Place: schedule.Place{Chat: alice}, User: alice, Task: "alice's own", Spec: every, Next: next}},
	}
}

// /jobs lists the chat's jobs with their state and buttons; in a group
// only a job's creator (or an admin) may press them, a stranger is
// refused with an alert; /jobs cancel and /jobs all.
func TestJobsCommand(t *testing.T) {
	jobs := &fakeJobs{jobs: someJobs()}
	h := startBot(t, func(o *testOptions) { o.Jobs = jobs })
	h.fake.Message(group, alice, "/jobs")
	msgs, err := h.fake.WaitSent(group, 1, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	list := msgs[0]
	for _, want := range []string{"• j1 — every 1h: top 5 of HN", "next: Thu 3 Dec 2026 09:00 CET",
		"last: Thu 3 Dec 2026 08:00 CET, ran, delivered", "tokens used: 1234",
		"• j2 — every 1h, when it changes: watch the price", "paused: the bot can no longer write to this chat"} {
		if !strings.Contains(list.Text, want) {
			t.Errorf("/jobs lacks %q:\n%s", want, list.Text)
		}
	}
	if strings.Contains(list.Text, "alice's own") {
		t.Errorf("/jobs in the group shows another chat's job:\n%s", list.Text)
	}
	want := [][]string{{"✖ Cancel j1", "▶ Run now"}, {"✖ Cancel j2", "▶ Run now", "⏯ Resume"}}
	if got := labels(list); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("buttons %q, want %q", got, want)
	}
	h.pressAll(t, []press{
		{chat: group, user: stranger, label: "✖ Cancel j1", answer: strangerPress, alert: true},
		{chat: group, user: alice, label: "✖ Cancel j1", answer: jobsMay, alert: true},
		{chat: group, user: bob, data: list.Keyboard[0][1].Data, answer: "Running j1 now; its answer comes here."},
		{chat: group, user: alice, data: list.Keyboard[1][2].Data, answer: "Resumed j2 (every 1h)."},
		{chat: group, user: bob, label: "✖ Cancel j1", answer: "Cancelled j1 (every 1h)."},
		{chat: group, user: bob, label: "✖ Cancel j1", answer: jobGone},
		{chat: group, user: alice, data: jobPrefix + "c:j3", answer: jobGone}, // another chat's, forged
	}, list)
	h.fake.Message(alice, alice, "/jobs cancel j3")
	h.fake.Message(alice, alice, "/jobs all")
	got := h.texts(t, alice, 2)
	if got[0] != "Cancelled j3 (every 1h)." || !strings.HasPrefix(got[1], "Only an admin") {
		t.Errorf("/jobs cancel, /jobs all: %q", got)
	}
	if a := jobs.actions(); !slices.Equal(a, []string{"runnow j1", "resume j2", "cancel j1", "cancel j3"}) {
		t.Errorf("actions %q", a)
	}
	if now := h.fake.Sent(group)[0]; strings.Contains(now.Text, "j1") {
		t.Errorf("the list after the cancel: %q", now.Text)
	}
}

// /tz shows and sets the chat's zone; an unknown one is refused.
func TestTzCommand(t *testing.T) {
	h := startBot(t, nil)
	h.fake.Message(alice, alice, "/tz")
	h.fake.Message(alice, alice, "/tz Mars/Olympus")
	h.fake.Message(alice, alice, "/tz Europe/Berlin")
	h.fake.Message(alice, alice, "/tz")
	got := h.texts(t, alice, 4)
	if !strings.HasPrefix(got[0], "This chat's time zone: UTC.") || got[1] != "There is no time zone Mars/Olympus." ||
		!strings.HasPrefix(got[2], "This chat's time zone is now Europe/Berlin.") || !strings.HasPrefix(got[3], "This chat's time zone: Europe/Berlin.") {
		t.Errorf("/tz: %q", got)
	}
}
