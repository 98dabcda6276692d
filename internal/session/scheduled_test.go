package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func scheduledJob(place chat.Place, task, last string) schedule.Job {
	return schedule.Job{ID: "j1", Place: placeOf(place), User: 4242, Task: task, LastAnswer: last,
		Spec: schedule.Spec{Kind: schedule.Every, Every: time.Hour, Text: "every 1h", Zone: "Europe/Berlin"}}
}

func runJob(t *testing.T, e *env, job schedule.Job) (schedule.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.manager.RunJob(ctx, job, time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), true)
}

// A scheduled run is a turn apart: it sees the chat's memory, the task
// and the last answer, not the conversation, which it does not change;
// its answer is returned, not sent; its tokens are counted.
func TestScheduledRunIsApart(t *testing.T) {
	place := chat.Place{Chat: 7, Topic: 3}
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: "re: " + llmtest.LastUserText(req), Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}, nil
	}, envOptions{})
	e.deliver(place, "my secret plan")
	e.chat.waitTexts(t, place, 1)
	res, err := runJob(t, e, scheduledJob(place, "check the weather", "sunny"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Answer, "re: check the weather") || !strings.Contains(res.Answer, "sunny") || res.Tokens != 120 {
		t.Errorf("result %+v", res)
	}
	reqs := e.model.Requests()
	run := reqs[len(reqs)-1]
	for _, want := range []string{"## Scheduled run", "j1 (every 1h) for Thu 3 Dec 2026 08:00 CET", "late", "Nobody is waiting"} {
		if !strings.Contains(run.System, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, run.System)
		}
	}
	if len(run.Messages) != 1 {
		t.Errorf("the run saw %d messages, want the task alone: %+v", len(run.Messages), run.Messages)
	}
	e.deliver(place, "and now?")
	if got := e.chat.waitTexts(t, place, 2); len(got) != 2 || strings.Contains(strings.Join(got, "|"), "weather") {
		t.Errorf("chat texts %q: the run's answer is the scheduler's to send", got)
	}
	after := e.model.Requests()
	if msgs := after[len(after)-1].Messages; len(msgs) != 3 || strings.Contains(msgs[1].Parts[0].Text, "weather") {
		t.Errorf("the conversation after the run: %d messages, want the two turns alone", len(msgs))
	}
}

// A run that loops is stopped by its token cap, and says so; its tokens
// are counted all the same.
func TestScheduledRunCap(t *testing.T) {
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		r := toolCall("c", MemoryToolName, `{"action":"list"}`)
		r.Usage = llm.Usage{InputTokens: 5000, OutputTokens: 100}
		return r, nil
	}, envOptions{maxTokensPerRun: 12_000})
	res, err := runJob(t, e, scheduledJob(chat.In(7), "loop", ""))
	var stopped *runStoppedError
	if !errors.As(err, &stopped) || !strings.Contains(stopped.UserMessage(), "SCHEDULE_MAX_TOKENS_PER_RUN") {
		t.Fatalf("err %v, want the cap", err)
	}
	if n := len(e.model.Requests()); n != 3 || res.Tokens != 15_300 {
		t.Errorf("%d requests, %d tokens; want 3 and 15300 (the third started under the cap)", n, res.Tokens)
	}
}

// A tool that needs approval fails in a scheduled run, nobody is asked;
// one approved always in the chat runs.
func TestScheduledRunNeedsApproval(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	o := envOptions{server: func(c *mcpconfig.ServerConfig) { c.Approval = mcpconfig.ApprovalWrites },
		approve: func(context.Context, ApprovalRequest) (Approval, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			return ApprovedAlways, nil
		}}
	e := newEnv(t, callThenReport("sleep", `{"ms":1}`), o)
	res, err := runJob(t, e, scheduledJob(chat.In(7), "sleep a bit", ""))
	if err != nil || res.Answer != "result: "+unattendedApproval {
		t.Fatalf("answer %q, err %v", res.Answer, err)
	}
	e.deliver(chat.In(7), "sleep") // the user approves always
	e.chat.waitTexts(t, chat.In(7), 1)
	res, err = runJob(t, e, scheduledJob(chat.In(7), "sleep a bit", ""))
	if err != nil || res.Answer != "result: slept 1 ms" {
		t.Errorf("after the grant: answer %q, err %v", res.Answer, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("asked %d times, want once (by the user's turn)", asked)
	}
}

// A chat's run waits for the turn in hand: its model call comes after
// the turn's ended.
func TestScheduledRunWaitsForTurn(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	e := newEnv(t, func(ctx context.Context, req llm.Request) (llm.Response, error) {
		text := llmtest.LastUserText(req)
		mu.Lock()
		order = append(order, text)
		mu.Unlock()
		if text == "slow" {
			<-release
			mu.Lock()
			order = append(order, "slow ends")
			mu.Unlock()
		}
		return llm.Response{Text: "done"}, nil
	}, envOptions{})
	e.deliver(chat.In(7), "slow")
	testkit.WaitFor(t, "the slow turn's model call", 30*time.Second, func() bool { return len(e.model.Requests()) == 1 })
	done := make(chan error, 1)
	go func() { _, err := runJob(t, e, scheduledJob(chat.In(7), "quick", "")); done <- err }()
	s, _ := e.manager.get(chat.In(7))
	testkit.WaitFor(t, "the run queued", 30*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.queue) == 1
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, "|") != "slow|slow ends|quick" {
		t.Errorf("order %q", order)
	}
}

// The schedule tool makes a job in the chat's zone and answers with its
// id and next run there; a refusal's reason reaches the model; list and
// cancel are the place's; a scheduled run may not create.
func TestScheduleTool(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: llmtest.ResultText(res[0])}, nil
		}
		mu.Lock()
		defer mu.Unlock()
		args := calls[0]
		calls = calls[1:]
		return toolCall("c", ScheduleToolName, args), nil
	}, envOptions{})
	l, err := schedule.OpenLedger(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e.manager.SetScheduler(schedule.New(l, e.manager, nil, nil, schedule.Options{}))
	if err := e.manager.SetZone(chat.Place{Chat: 7, Topic: 9}, "Europe/Berlin"); err != nil {
		t.Fatal(err)
	}
	if err := e.manager.SetZone(chat.In(7), "Mars/Olympus"); err == nil {
		t.Error("an unknown zone was set")
	}
	place := chat.In(7)
	steps := []struct{ args, want string }{
		{`{"task":"say hi","in":"2h"}`, "scheduled j1 (in 2h, notify always); next run "},
		{`{"task":"say hi","every":"1s"}`, "refused: "},
		{`{"task":"x","cron":"* * * * * * *"}`, "refused: "},
		{`{"action":"list"}`, "j1: in 2h — say hi (next "},
		{`{"action":"cancel","id":"j9"}`, "this chat has no job j9"},
		{`{"action":"cancel","id":"j1"}`, "cancelled j1 (in 2h)"},
		{`{"action":"list"}`, "no scheduled tasks in this chat"},
	}
	for i, st := range steps {
		mu.Lock()
		calls = append(calls, st.args)
		mu.Unlock()
		e.deliver(place, "go")
		got := e.chat.waitTexts(t, place, i+1)[i]
		if !strings.Contains(got, st.want) {
			t.Errorf("%s: %q, want %q", st.args, got, st.want)
		}
		if i == 0 && !strings.HasSuffix(got, "CET. The user sees it in /jobs.") {
			t.Errorf("next run not in the chat's zone (Europe/Berlin): %q", got)
		}
	}
	mu.Lock()
	calls = append(calls, `{"task":"more","in":"1h"}`)
	mu.Unlock()
	res, err := runJob(t, e, scheduledJob(place, "schedule more", ""))
	if err != nil || !strings.Contains(res.Answer, "a scheduled run cannot schedule more tasks") {
		t.Errorf("a run's create: %q, %v", res.Answer, err)
	}
}

// A server's question in a scheduled run has nobody to ask: it is
// cancelled, and the chat is not asked.
func TestScheduledRunElicitationCancelled(t *testing.T) {
	model := newElicitModel()
	var mu sync.Mutex
	asked := 0
	e := newEnv(t, model.answer, envOptions{modes: []string{fakemcp.ModeAsk},
		elicit: func(context.Context, ElicitRequest) (chat.ElicitResult, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			return chat.ElicitResult{Action: chat.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		}})
	if _, err := runJob(t, e, scheduledJob(chat.In(44), "sign me up", "")); err != nil {
		t.Fatal(err)
	}
	if res := model.wait(t); !strings.HasPrefix(res, "cancel") {
		t.Errorf("the server got %q, want a cancel", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("the chat was asked %d times", asked)
	}
}

// Nobody waits in a scheduled run: ask_user and browser_handoff answer so
// at once, and nothing is shown in the chat.
func TestScheduledRunAsksNobody(t *testing.T) {
	for _, tc := range []struct{ tool, args, want string }{
		{AskUserToolName, `{"question":"Which one?","options":["a","b"]}`, "no question can be asked"},
		{BrowserHandoffToolName, `{"reason":"solve the CAPTCHA"}`, "nobody is waiting in a scheduled run to take over the browser"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			h := &fakeHandoffs{}
			e := newEnv(t, callThenReport(tc.tool, tc.args), envOptions{handoffs: h,
				showHandoff: func(context.Context, HandoffPrompt) (HandoffOutcome, error) {
					t.Error("a hand-off was shown in a scheduled run")
					return HandoffStopped, nil
				}})
			res, err := runJob(t, e, scheduledJob(chat.In(7), "check the page", ""))
			if err != nil || !strings.Contains(res.Answer, tc.want) {
				t.Errorf("answer %q, err %v; want %q", res.Answer, err, tc.want)
			}
			if h.current() != nil {
				t.Error("a live view was begun")
			}
		})
	}
}

// fakeScheduler lists views; it makes and cancels nothing.
type fakeScheduler struct {
	views []schedule.JobView
	zones schedule.Zones
}

func (f *fakeScheduler) Create(schedule.Place, int64, schedule.Request) (schedule.Job, error) {
	return schedule.Job{}, errors.New("not here")
}
func (f *fakeScheduler) Cancel(schedule.Place, string) (schedule.Job, error) {
	return schedule.Job{}, errors.New("not here")
}
func (f *fakeScheduler) List(schedule.Place) []schedule.JobView { return f.views }
func (f *fakeScheduler) Zones() *schedule.Zones                 { return &f.zones }

// The answers a chat's tasks sent within a day are in its own turns'
// system prompt, the latest first, at most three, redacted and cut; one
// not delivered, or sent long ago, is not; a scheduled run has its own
// note instead.
func TestSentByTasksInThePrompt(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	view := func(id, task, answer string, state schedule.DeliveryState, ago time.Duration) schedule.JobView {
		return schedule.JobView{Job: schedule.Job{ID: id, Task: task, LastAnswer: answer},
			Delivery: &schedule.Delivery{State: state, Created: now.Add(-ago - time.Second), Updated: now.Add(-ago)}}
	}
	sched := &fakeScheduler{views: []schedule.JobView{
		view("j1", "top 5 of Hacker News", "1. Go 1.27 released\n2. sk-sentsecret-0123456789abcdef", schedule.Delivered, time.Hour),
		view("j2", "weather", "Sunny, 21°C", schedule.Delivered, 10*time.Minute),
		view("j3", "stock of the red bike", "back in stock", schedule.Pending, time.Minute),
		view("j4", "old digest", "from yesterday", schedule.Delivered, 25*time.Hour),
		view("j5", "long", strings.Repeat("é", 2000), schedule.Delivered, 2*time.Hour),
		view("j6", "oldest of four", "fourth", schedule.Delivered, 3*time.Hour),
	}}
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: "ok"}, nil
	}, envOptions{now: func() time.Time { return now }, secrets: []string{"sk-sentsecret-0123456789abcdef"}})
	e.manager.SetScheduler(sched)
	place := chat.In(7)
	e.deliver(place, "tell me more about the first")
	e.chat.waitTexts(t, place, 1)
	system := e.model.Requests()[0].System
	i2, i1, i5 := strings.Index(system, "task j2 (weather)"), strings.Index(system, "task j1 (top 5"), strings.Index(system, "task j5 (long), its start")
	if !strings.Contains(system, "## Sent by scheduled tasks") || i2 < 0 || i1 < i2 || i5 < i1 {
		t.Errorf("want j2, j1, j5 in that order:\n%s", system)
	}
	for _, not := range []string{"j3", "j4", "j6", "sk-sentsecret"} {
		if strings.Contains(system, not) {
			t.Errorf("the prompt has %q:\n%s", not, system)
		}
	}
	if !strings.Contains(system, "1. Go 1.27 released") || strings.Count(system, "é") > sentAnswer/2 {
		t.Errorf("answers not shown or not cut:\n%.3000s", system)
	}
	if _, err := runJob(t, e, scheduledJob(place, "weather", "")); err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if run := reqs[len(reqs)-1].System; strings.Contains(run, "## Sent by scheduled tasks") {
		t.Errorf("a scheduled run got the section:\n%s", run)
	}
}
