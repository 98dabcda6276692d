package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// A scheduled run (schedule.Runner) is a turn in the job's chat (topic)
// with the task as its message, queued on the chat's mailbox like a
// user's message: a chat that is busy runs it after the turn in hand,
// and runs of different chats run in parallel (the scheduler bounds
// them). Its context is fresh and bounded: the system prompt with the
// chat's memory and a note that this is a scheduled run nobody waits
// for, and the task with the job's last answer — not the conversation,
// which the run neither reads nor changes (its messages are kept in
// memory only). Nobody can approve a tool or answer a question: a call
// that needs approval not granted "always in this chat" fails with a
// result that says to run it by hand. Each model request reserves the
// chat's allowance as the chat's turns do, and the run stops once it
// would pass MaxTokensPerRun. The answer is not sent: the scheduler
// delivers it.

// scheduledRun is one run, handed from RunJob to the chat's goroutine.
type scheduledRun struct {
	ctx  context.Context // the scheduler's: cancelled with the job, or at Close
	job  schedule.Job
	slot time.Time
	late bool
	done chan scheduledResult // buffered: end never blocks
	cap  int

	// The chat's goroutine's, during the run.
	answer  string
	tokens  int
	tr      *transcript // the conversation's, parked
	summary agent.Summary
}

type scheduledResult struct {
	res schedule.Result
	err error
}

// end answers RunJob (once).
func (r *scheduledRun) end(res schedule.Result, err error) { r.done <- scheduledResult{res, err} }

// RunJob runs job's slot as a turn of its chat (schedule.Runner). It
// returns when the run ended, or when ctx did.
func (m *Manager) RunJob(ctx context.Context, job schedule.Job, slot time.Time, late bool) (schedule.Result, error) {
	s, err := m.get(chat.Place{Chat: job.Place.Chat, Topic: job.Place.Topic})
	if err != nil {
		return schedule.Result{}, err
	}
	r := &scheduledRun{ctx: ctx, job: job, slot: slot, late: late, done: make(chan scheduledResult, 1), cap: m.o.MaxTokensPerRun}
	if _, err := s.enqueue(input{kind: inputRun, text: r.message(), from: job.User, run: r}); err != nil {
		return schedule.Result{}, err
	}
	select {
	case out := <-r.done:
		return out.res, out.err
	case <-ctx.Done():
		return schedule.Result{}, ctx.Err()
	}
}

// runScheduled runs in.run on the chat's goroutine: /stop ends it as it
// ends a turn, the scheduler by its context.
func (s *session) runScheduled(in *input) {
	r := in.run
	if err := r.ctx.Err(); err != nil {
		r.end(schedule.Result{}, err)
		return
	}
	m := s.m
	ctx, cancel := context.WithCancelCause(m.ctx)
	stop := context.AfterFunc(r.ctx, func() { cancel(context.Cause(r.ctx)) })
	// /stop ends it; no asker is set: a server's question (elicitation)
	// has nobody to ask, and is cancelled.
	s.setTurn(func() { cancel(errTurnStopped) })
	defer func() {
		stop()
		s.setTurn(nil)
		cancel(nil)
	}()
	if err := s.open(); err != nil {
		r.end(schedule.Result{}, err)
		return
	}
	s.park(r)
	defer s.unpark(r)
	err := s.agent(ctx, in, noActivity{})
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	m.logger.Info("scheduled run", "chat", s.id, "job", r.job.ID, "tokens", r.tokens, "ok", err == nil)
	r.end(schedule.Result{Answer: r.answer, Tokens: r.tokens}, err)
}

// park sets the conversation aside for the run: the run's messages go to
// a history of their own, kept in memory only.
func (s *session) park(r *scheduledRun) {
	r.tr, r.summary = s.tr, s.summary
	s.parked, s.history, s.summary = s.history, nil, agent.Summary{}
	s.tr = &transcript{dir: s.private, logger: s.tr.logger}
}

// unpark brings the conversation back as it was.
func (s *session) unpark(r *scheduledRun) {
	s.history, s.summary, s.tr = s.parked, r.summary, r.tr
	s.parked = nil
	s.pinImages()
}

// message is the run's user message: the task, and the last answer.
func (r *scheduledRun) message() string {
	if r.job.LastAnswer == "" {
		return r.job.Task
	}
	cut := ""
	if r.job.LastCut {
		cut = " (its start)"
	}
	return fmt.Sprintf("%s\n\n(Your answer to this task last time%s:\n%s\n)", r.job.Task, cut, r.job.LastAnswer)
}

// note is the system prompt's part that says what the run is.
func (r *scheduledRun) note(zones *schedule.Zones) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Scheduled run\nThis is a scheduled run of the task %s (%s) for %s", r.job.ID, r.job.Spec.Text,
		zones.Format(r.slot, r.job.Spec.Zone))
	if r.late {
		b.WriteString(" — late: the bot was down or the chat busy then")
	}
	b.WriteString(". The user's message is the task they scheduled. Nobody is waiting in the chat: nobody can answer " +
		"a question or approve a tool. Do the task and answer with what the user should read; your answer is sent to " +
		"the chat as a message of its own.")
	if r.job.Notify == schedule.Changed {
		b.WriteString(" The task watches for a change: your answer is sent only when it differs from the last one sent, " +
			"so state the facts plainly and in the same form each time, without the time or anything else that changes " +
			"on every run.")
	}
	return b.String()
}

// reserve is request's allowance step for a scheduled run: the run
// stops before a request that would pass its cap, or when the chat's
// allowance is used up; what each request cost counts toward the cap.
func (r *scheduledRun) reserve(ctx context.Context, t *turn, req llm.Request) (llm.Request, func(llm.Usage), error) {
	prompt := agent.RequestTokens(req.System, req.Tools, req.Messages, req.MaxTokens) - agent.AnswerTokens(req.MaxTokens)
	if int64(r.tokens)+prompt > int64(r.cap) {
		return llm.Request{}, nil, &runStoppedError{why: fmt.Sprintf(
			"it stopped at %d tokens: one more step would pass the %d a scheduled run may use (SCHEDULE_MAX_TOKENS_PER_RUN)", r.tokens, r.cap)}
	}
	spent, _, err := t.s.m.reserve(ctx, t.s.id, r.job.User, req)
	if err != nil {
		return llm.Request{}, nil, err
	}
	if spent == nil {
		return llm.Request{}, nil, &runStoppedError{why: "the chat's daily allowance is used up"}
	}
	return req, func(u llm.Usage) {
		r.tokens += u.InputTokens + u.OutputTokens
		spent(u)
	}, nil
}

// runStoppedError ends a scheduled run early: why is the user's.
type runStoppedError struct{ why string }

func (e *runStoppedError) Error() string       { return "scheduled run: " + e.why }
func (e *runStoppedError) UserMessage() string { return e.why }

// unattendedBuiltins are the built-ins of a scheduled run: the schedule
// tool may not create, and ask_user and browser_handoff have nobody to
// ask.
func (s *session) unattendedBuiltins() []chat.Tool {
	tools := s.builtins()
	for i, t := range tools {
		switch t.(type) {
		case scheduleTool:
			tools[i] = scheduleTool{s: s, unattended: true}
		case askUserTool:
			tools[i] = refusedTool{Tool: t, why: "nobody is waiting in a scheduled run, so no question can be asked: " +
				"answer with what you know, and say what is missing"}
		case browserHandoffTool:
			tools[i] = refusedTool{Tool: t, why: "nobody is waiting in a scheduled run to take over the browser: " +
				"say in your answer what the user must do by hand, and where"}
		}
	}
	return tools
}

// refusedTool is a tool whose calls fail with why.
type refusedTool struct {
	chat.Tool
	why string
}

func (t refusedTool) Call(context.Context, json.RawMessage) (chat.Result, error) {
	return chat.ErrorResult(t.why), nil
}

// unattendedApproval is the result of a call that needed approval in a
// scheduled run.
const unattendedApproval = "This call needs a user's approval, which a scheduled run cannot ask for (nobody is " +
	"waiting), so it was not run. Tell the user to run this step by hand in the chat, or to approve the tool with " +
	"\"Always in this chat\" there first."

// approveUnattended is approve without anyone to ask: a call runs when
// its server's rule lets it run freely, or it was approved always in
// this chat.
func (s *session) approveUnattended(g chat.Guard, name string) (bool, string) {
	if _, free := s.mayRun(g, name); free {
		return true, ""
	}
	s.m.logger.Info("a scheduled run's tool call needs approval: not run", "chat", s.id, "server", g.Server, "tool", g.Tool)
	return false, unattendedApproval
}

// noActivity is a scheduled run's: nobody watches it.
type noActivity struct{}

func (noActivity) ToolCall(string, json.RawMessage) {}
func (noActivity) Done()                            {}
