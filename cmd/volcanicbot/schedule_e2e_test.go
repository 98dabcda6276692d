package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// scheduler is the model of the schedule tests: "schedule <json>" calls
// the schedule tool with those arguments and says what it answered; a
// scheduled run (its system prompt says so) answers with runAnswer and is
// counted.
type scheduler struct {
	mu     sync.Mutex
	runs   int // the scheduled runs' model requests
	answer string
	// loop makes a scheduled run call a tool at every step, each request
	// reported as 2,000 input tokens.
	loop bool
}

func (s *scheduler) reply(req llmtest.Request) llmtest.Reply {
	if strings.Contains(wireSystem(req), "## Scheduled run") {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.runs++
		if s.loop {
			r := call(session.MemoryToolName, `{"action":"list"}`)
			r.Usage = llm.Usage{InputTokens: 2000, OutputTokens: 10}
			return r
		}
		return llmtest.Text(s.answer)
	}
	if res, ok := toolResultText(req); ok {
		return llmtest.Text("tool: " + res)
	}
	if args, ok := strings.CutPrefix(lastUserText(req), "schedule "); ok {
		return call(session.ScheduleToolName, args)
	}
	return llmtest.Text("?")
}

func (s *scheduler) set(answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = answer
}

func (s *scheduler) runCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}

// count is how many messages of chat (topic) hold substr.
func count(msgs []telegramtest.Message, topic int, substr string) int {
	n := 0
	for _, m := range msgs {
		if m.ThreadID == topic && strings.Contains(m.Text, substr) {
			n++
		}
	}
	return n
}

// scheduleEnv is the daemon's environment for the schedule tests: a
// minimum interval of a second.
var scheduleEnv = []string{"SCHEDULE_MIN_INTERVAL_SECONDS=1", "TZ=Europe/Berlin"}

// The model schedules a task in 3 s from a topic of a private chat; the
// run happens and its answer arrives once, in the topic, through a 429;
// `volcanicbot jobs` lists it with its delivery.
func TestE2EScheduledJob(t *testing.T) {
	model := &scheduler{answer: "Hello from the scheduled run"}
	addr := freeAddr(t)
	d := startDaemon(t, model.reply, daemonOptions{extra: append([]string{"METRICS_ADDR=" + addr}, scheduleEnv...)})
	d.tg.TopicMessage(alice, alice, 5, `schedule {"task":"say hello","in":"3s"}`)
	d.waitText(alice, "tool: scheduled j1 (in 3s, notify always); next run ")
	if !strings.Contains(strings.Join(d.texts(alice), "\n"), "CET") {
		t.Errorf("the next run is not told in the zone TZ gives: %q", d.texts(alice))
	}
	d.tg.FailNext("sendMessage", http.StatusTooManyRequests, "", 1) // the delivery's first try
	d.waitText(alice, "Hello from the scheduled run")
	d.waitLog(`"msg":"scheduled run"`)
	testkit.WaitFor(t, "volcanicbot jobs to show the delivery", 20*time.Second, func() bool {
		return strings.Contains(jobsOutput(t, d), "delivered")
	})
	if n := count(d.tg.Sent(alice), 5, "Hello from the scheduled run"); n != 1 || model.runCount() != 1 {
		t.Errorf("the answer arrived %d times in topic 5 after %d runs, want once after one", n, model.runCount())
	}
	metrics := scrape(t, addr)
	for _, want := range []string{`volcanicbot_schedule_runs_total{outcome="started"} 1`, `volcanicbot_schedule_runs_total{outcome="failed"} 0`,
		`volcanicbot_schedule_deliveries_total{outcome="delivered"} 1`, `volcanicbot_schedule_jobs{state="pending"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	out := jobsOutput(t, d)
	for _, want := range []string{"scheduled tasks: 1", fmt.Sprintf("%d/5", alice), "j1", "in 3s", "done", " ok", "delivered (", "say hello"} {
		if !strings.Contains(out, want) {
			t.Errorf("volcanicbot jobs lacks %q:\n%s", want, out)
		}
	}
	// The user answers the task's message: the model sees what was sent.
	asked := len(d.model.Requests())
	d.tg.TopicMessage(alice, alice, 5, "what did you just tell me?")
	if err := d.tg.WaitUntil(func() bool { return len(d.model.Requests()) > asked }, 20*time.Second); err != nil {
		t.Fatal("the follow-up never reached the model")
	}
	if system := wireSystem(d.model.Requests()[asked]); !strings.Contains(system, "## Sent by scheduled tasks") ||
		!strings.Contains(system, "task j1 (say hello):\nHello from the scheduled run") {
		t.Errorf("the follow-up's system prompt lacks the answer sent:\n%s", system)
	}
}

// jobsOutput is what `volcanicbot jobs` prints beside the running daemon.
func jobsOutput(t *testing.T, d *daemon) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"jobs"}, &out, &errOut, d.environ); code != 0 {
		t.Fatalf("volcanicbot jobs: exit %d: %s", code, errOut.String())
	}
	return out.String()
}

// A restart between a run and its delivery delivers the answer, once,
// without running the task again; 500s on the way are retried.
func TestE2EScheduledDeliveryAcrossRestart(t *testing.T) {
	dataDir, tg := t.TempDir(), newTelegram(t)
	model := &scheduler{answer: "The answer that waited"}
	d := startDaemon(t, model.reply, daemonOptions{dataDir: dataDir, tg: tg, extra: scheduleEnv})
	tg.Message(alice, alice, `schedule {"task":"answer later","in":"2s"}`)
	d.waitText(alice, "tool: scheduled j1")
	for range 5 { // every try of the sender's first attempt
		tg.FailNext("sendMessage", http.StatusInternalServerError, "Internal Server Error", 0)
	}
	d.waitLog(`"msg":"delivery failed; retrying"`)
	d.stop()
	if n := count(tg.Sent(alice), 0, "The answer that waited"); n != 0 || model.runCount() != 1 {
		t.Fatalf("before the restart: %d deliveries, %d runs", n, model.runCount())
	}
	d2 := startDaemon(t, model.reply, daemonOptions{dataDir: dataDir, tg: tg, extra: scheduleEnv})
	d2.waitText(alice, "The answer that waited")
	d2.stop()
	if n := count(tg.Sent(alice), 0, "The answer that waited"); n != 1 || model.runCount() != 1 {
		t.Errorf("after the restart: %d deliveries, %d runs; want one of each", n, model.runCount())
	}
}

// A chat that refuses the bot (403) pauses the job, and /jobs says why;
// a stranger's press of its button is refused with an alert, the
// owner's cancels it.
func TestE2EScheduledJobPausedAndButtons(t *testing.T) {
	model := &scheduler{answer: "tick"}
	d := startDaemon(t, model.reply, daemonOptions{extra: scheduleEnv})
	d.tg.Message(alice, alice, `schedule {"task":"tick","every":"2s"}`)
	d.waitText(alice, "tool: scheduled j1 (every 2s")
	d.tg.FailNext("sendMessage", http.StatusForbidden, "Forbidden: bot was blocked by the user", 0)
	d.waitLog(`"msg":"delivery refused for good; job paused"`)
	d.tg.Message(alice, alice, "/jobs")
	d.waitText(alice, "paused: the bot can no longer write to this chat (it was blocked or removed)")
	runs := model.runCount()
	var list telegramtest.Message
	for _, m := range d.tg.Sent(alice) {
		if strings.HasPrefix(m.Text, "Scheduled tasks in this chat") {
			list = m
		}
	}
	stranger := int64(999)
	id := d.tg.Callback(alice, stranger, list.ID, list.Keyboard[0][0].Data)
	if a, err := d.tg.WaitAnswer(id, 20*time.Second); err != nil || !a.ShowAlert {
		t.Errorf("a stranger's press: %+v, %v; want an alert", a, err)
	}
	id = d.tg.Callback(alice, alice, list.ID, list.Keyboard[0][0].Data)
	if a, err := d.tg.WaitAnswer(id, 20*time.Second); err != nil || a.Text != "Cancelled j1 (every 2s)." {
		t.Errorf("the owner's press: %+v, %v", a, err)
	}
	d.tg.Message(alice, alice, "/jobs")
	d.waitText(alice, "No scheduled tasks in this chat.")
	if n := model.runCount(); n != runs {
		t.Errorf("the paused job ran %d more times", n-runs)
	}
	if n := count(d.tg.Sent(alice), 0, "tick"); n != 0 {
		t.Errorf("%d ticks arrived; the only one was refused", n)
	}
}

// A watcher (notify changed) sends its first answer, then nothing while
// the answer stays the same, then the new answer with what changed.
func TestE2EWatcherSendsChanges(t *testing.T) {
	model := &scheduler{answer: "price: 10 EUR"}
	d := startDaemon(t, model.reply, daemonOptions{extra: scheduleEnv})
	d.tg.Message(alice, alice, `schedule {"task":"watch the price","every":"1s","notify":"changed"}`)
	d.waitText(alice, "tool: scheduled j1 (every 1s, notify changed)")
	d.waitText(alice, "price: 10 EUR")
	testkit.WaitFor(t, "four runs", 20*time.Second, func() bool { return model.runCount() >= 4 })
	model.set("price: 12 EUR")
	d.waitText(alice, "price: 12 EUR")
	d.tg.Message(alice, alice, "/jobs cancel j1")
	d.waitText(alice, "Cancelled j1")
	msgs := d.tg.Sent(alice)
	if n := count(msgs, 0, "price: 10 EUR"); n != 2 { // the first answer, and "what changed"'s removed line
		t.Errorf("price 10 appears in %d messages, want 2: %q", n, d.texts(alice))
	}
	var changed string
	for _, m := range msgs {
		if strings.Contains(m.Text, "price: 12 EUR") {
			changed = m.Text
		}
	}
	if !strings.HasPrefix(changed, "What changed") {
		t.Errorf("the change: %q, want what changed first", changed)
	}
}

// A run that loops is stopped by SCHEDULE_MAX_TOKENS_PER_RUN, and the
// user is told why.
func TestE2EScheduledRunCap(t *testing.T) {
	model := &scheduler{loop: true}
	d := startDaemon(t, model.reply, daemonOptions{extra: append(scheduleEnv, "SCHEDULE_MAX_TOKENS_PER_RUN=7000")})
	d.tg.Message(alice, alice, `schedule {"task":"loop forever","in":"1s"}`)
	d.waitText(alice, "tool: scheduled j1")
	d.waitText(alice, "The scheduled task j1 (“loop forever”) failed: it stopped at ")
	d.waitText(alice, "SCHEDULE_MAX_TOKENS_PER_RUN")
	if n := model.runCount(); n < 1 || n > 4 {
		t.Errorf("the run made %d model requests, want at most 4 under a 7000-token cap", n)
	}
}

// A task due while the bot is down runs once when it starts again.
func TestE2EScheduledJobDueDuringRestart(t *testing.T) {
	dataDir, tg := t.TempDir(), newTelegram(t)
	model := &scheduler{answer: "Ran after the restart"}
	d := startDaemon(t, model.reply, daemonOptions{dataDir: dataDir, tg: tg, extra: scheduleEnv})
	tg.Message(alice, alice, `schedule {"task":"run while down","in":"5s"}`)
	d.waitText(alice, "tool: scheduled j1")
	due := time.Now().Add(5 * time.Second)
	d.stop()
	if model.runCount() != 0 {
		t.Fatal("the task ran before the stop")
	}
	testkit.WaitFor(t, "the task's time to pass while the bot is down", 20*time.Second, func() bool { return time.Now().After(due) })
	d2 := startDaemon(t, model.reply, daemonOptions{dataDir: dataDir, tg: tg, extra: scheduleEnv})
	d2.waitText(alice, "Ran after the restart")
	d2.waitLog(`"msg":"run finished"`)
	d2.stop()
	if n := count(tg.Sent(alice), 0, "Ran after the restart"); n != 1 || model.runCount() != 1 {
		t.Errorf("%d deliveries after %d runs, want one of each", n, model.runCount())
	}
}
