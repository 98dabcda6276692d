package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/preset"
)

// agent runs model calls and tool calls until the model answers without
// tools, the step cap is reached, or ctx ends.
//
// in is taken once the transcript holds the user's message.
func (s *session) agent(ctx context.Context, in *input, activity Activity) error {
	t, err := s.newTurn(ctx, in)
	if err != nil {
		return err
	}
	// The browser the turn uses stays its own until the turn ends:
	// another chat waits for it rather than take it while the model
	// thinks between two calls.
	defer t.mcp.BeginTurn()()
	t.start(ctx, activity)
	for step := 0; step < s.m.o.MaxSteps; step++ {
		if done, err := t.step(ctx, step); done || err != nil {
			return err
		}
	}
	if t.sched != nil {
		return &runStoppedError{why: fmt.Sprintf("it stopped after %d steps without finishing", s.m.o.MaxSteps)}
	}
	s.reply(s.m.ctx, fmt.Sprintf("I stopped after %d steps without finishing. Say \"continue\" to let me go on, or /new to start over.", s.m.o.MaxSteps))
	return nil
}

// turn is one user message's run of the agent loop, on the session's
// goroutine: what its steps share.
type turn struct {
	s   *session
	in  *input
	mcp MCPSession
	// current is the index in s.history of the user's message that
	// opened the turn: the budget never drops it or what follows.
	current int

	// catalog is the MCP catalogue version tools was resolved at; tools,
	// system and runner change with the tools offered (refreshTools).
	catalog uint64
	// model is the chat's model, for every request of the turn.
	model  string
	tools  *toolset
	system string
	runner *toolRunner
	// streamer shows the model's text as it comes; nil: the answer
	// goes as one message.
	streamer StreamingActivity
	// unsummarised: a summary failed in this turn (summary.go)
	unsummarised bool
	// sched is the scheduled run the turn is (scheduled.go); nil: a
	// user's message.
	sched *scheduledRun
}

// newTurn opens a turn on in: the user's message goes into the
// conversation (and in is taken), and the chat's MCP session is at hand.
func (s *session) newTurn(ctx context.Context, in *input) (*turn, error) {
	user, err := s.userMessage(ctx, in.text, in.files)
	if err != nil {
		return nil, err
	}
	if err := s.appendMessage(user); err != nil {
		return nil, err
	}
	in.take()
	t := &turn{s: s, in: in, current: len(s.history) - 1, sched: in.run}
	if t.mcp, err = s.mcpSession(); err != nil {
		return nil, err
	}
	return t, nil
}

// start resolves the tools the turn offers, starts the servers the chat
// will likely call, and builds the system prompt and the tool runner.
func (t *turn) start(ctx context.Context, activity Activity) {
	s, m := t.s, t.s.m
	// A server that said its tools changed since the last turn: its
	// refresh is waited for, so that this turn offers the new list.
	t.mcp.ToolsChanged(ctx)
	// A server not discovered yet holds the turn up for DiscoveryWait at
	// most (none whose catalogue was kept from an earlier run): its tools
	// come with the step after they arrive.
	t.catalog = m.o.MCP.CatalogVersion()
	t.tools = s.toolsFor(ctx, m.o.DiscoveryWait)
	// What the chat will likely call starts while the model thinks.
	for _, name := range prewarmServers(s.history[:t.current], t.in.text, t.tools, m.o.MCP.Servers()) {
		t.mcp.Prewarm(name)
	}
	t.system = t.prompt()
	t.model = s.model()
	t.runner = &toolRunner{tools: t.registry(), redact: m.o.Redactor.Redact, activity: activity,
		approve: func(ctx context.Context, g chat.Guarded, name string, args json.RawMessage) (bool, string) {
			if t.sched != nil {
				return s.approveUnattended(g.Guard(), name)
			}
			return s.approve(ctx, g.Guard(), name, args, t.in.from)
		}}
	t.streamer, _ = activity.(StreamingActivity)
	if m.o.NoStream || t.sched != nil {
		t.streamer = nil
	}
}

// prompt is the system prompt for the tools offered now, with the chat's
// memory as it is now.
func (t *turn) prompt() string {
	m := t.s.m
	system := buildSystemPrompt(m.o.SystemPrompt, m.sections, t.tools.active, t.tools.section, t.s.memoryPrompt(), m.o.Now())
	if t.sched != nil {
		system += "\n\n" + t.sched.note(m.zones())
	} else if sent := m.sentByTasks(t.s.id, m.o.Now()); sent != "" {
		system += "\n\n" + sent
	}
	return system
}

// registry binds the tools offered now to the chat's MCP session.
func (t *turn) registry() *registry {
	if t.sched != nil {
		return newRegistry(t.tools, t.mcp, t.s.unattendedBuiltins())
	}
	return newRegistry(t.tools, t.mcp, t.s.builtins())
}

// step makes one model request and runs the tools it calls. done: the
// turn is over (the model answered, or the allowance is used up).
func (t *turn) step(ctx context.Context, step int) (done bool, err error) {
	if step > 0 {
		t.refreshTools(ctx, step)
	}
	req, spent, err := t.request(ctx, step)
	if err != nil || spent == nil {
		return true, err
	}
	resp, err := t.callModel(ctx, step, req, spent)
	if err != nil {
		return true, err
	}
	text, err := t.recordAnswer(&resp)
	if err != nil {
		return true, err
	}
	if len(resp.ToolCalls) == 0 {
		if t.sched != nil { // the scheduler delivers it
			t.sched.answer = text
			return true, nil
		}
		if text == "" {
			text = emptyAnswer
		}
		if err := t.s.deliverAnswer(t.streamer, text); err != nil {
			return true, err
		}
		t.s.speak(ctx, text)
		return true, nil
	}
	return false, t.runTools(ctx, resp.ToolCalls)
}

// refreshTools offers the tools as they are now when a server's tools
// changed during the last step's calls (notifications/tools/list_changed),
// or a catalogue changed meanwhile (a discovery ended: tools that came
// late, a server that failed, a kept list that was out of date).
func (t *turn) refreshTools(ctx context.Context, step int) {
	m := t.s.m
	changed := t.mcp.ToolsChanged(ctx)
	if !changed && m.o.MCP.CatalogVersion() == t.catalog {
		return
	}
	t.catalog = m.o.MCP.CatalogVersion()
	next := t.s.toolsFor(ctx, 0)
	if !changed && next.key == t.tools.key {
		return
	}
	t.tools = next
	t.system = t.prompt()
	t.runner.tools = t.registry()
	m.logger.Info("MCP tools changed: the chat's next step offers the new list", "chat", t.s.id, "step", step, "tools", len(t.tools.mcp))
}

// request builds the step's model request — the tools offered, the
// conversation fitted to the context budget with its images loaded — and
// reserves the most it can cost of the allowance. spent is nil when the
// allowance is used up: no request, and the chat is told once.
func (t *turn) request(ctx context.Context, step int) (req llm.Request, spent func(llm.Usage), err error) {
	s, m := t.s, t.s.m
	specs := t.offeredTools()
	fixed := agent.EstimateText(t.system) + agent.EstimateTools(specs)
	msgs := preset.SupersedeSnapshots(s.history, t.tools.serverOf)
	msgs, err = t.fit(ctx, msgs, fixed) // summarised or trimmed: summary.go
	if err == nil {
		msgs, err = s.withImages(msgs)
	}
	if err != nil {
		return llm.Request{}, nil, err
	}
	req = llm.Request{Model: t.model, System: t.system, Messages: agent.MergeAdjacent(agent.RepairToolCalls(msgs)),
		Tools: specs, StableTools: len(t.tools.stable)}
	if t.sched != nil {
		return t.sched.reserve(ctx, t, req)
	}
	spent, notice, err := m.reserve(ctx, s.id, t.in.from, req)
	if err != nil {
		return llm.Request{}, nil, err
	}
	if spent == nil {
		m.logger.Info("no model request: a daily allowance is used", "chat", s.id, "user", t.in.from, "step", step)
		if notice != "" {
			s.reply(m.ctx, notice)
		}
		return llm.Request{}, nil, nil
	}
	return req, spent, nil
}

// offeredTools returns the step's tool specs: the stable tools and the
// deferred ones the conversation loaded, which the runner notes (for
// tool_search).
func (t *turn) offeredTools() []llm.Tool {
	loaded := t.tools.loaded(t.s.history)
	specs := t.tools.specs(loaded)
	t.runner.tools.loaded = make(map[string]bool, len(loaded))
	for _, lt := range loaded {
		t.runner.tools.loaded[lt.Name] = true
	}
	return specs
}

// callModel sends req within ModelTimeout, its text streamed to the chat
// when the turn streams.
func (t *turn) callModel(ctx context.Context, step int, req llm.Request, spent func(llm.Usage)) (llm.Response, error) {
	s, m := t.s, t.s.m
	callCtx, cancel := context.WithTimeout(ctx, m.o.ModelTimeout)
	var stream *answerStream
	if t.streamer != nil {
		stream = &answerStream{to: t.streamer, redact: m.o.Redactor.Redact}
		req.OnText = stream.add
	}
	resp, err := m.complete(callCtx, req, spent)
	cancel()
	if err != nil {
		t.endedEarly(ctx, step, resp.Usage, stream)
		return resp, err
	}
	if stream != nil && stream.shown && len(resp.ToolCalls) > 0 {
		t.streamer.Stream("") // not the answer: tools follow
	}
	m.logger.Debug("model step", "chat", s.id, "step", step, "tool_calls", len(resp.ToolCalls), "tools", len(req.Tools),
		"input_tokens", resp.Usage.InputTokens, "cached_tokens", resp.Usage.CacheReadTokens,
		"cache_write_tokens", resp.Usage.CacheWriteTokens, "output_tokens", resp.Usage.OutputTokens)
	return resp, nil
}

// endedEarly handles a model request that failed or was stopped: its
// estimated cost is logged, and what it streamed stays in the chat — and
// in the conversation when the user stopped the turn.
func (t *turn) endedEarly(ctx context.Context, step int, u llm.Usage, stream *answerStream) {
	s, m := t.s, t.s.m
	if u.Estimated > 0 {
		m.logger.Info("model request ended early: its cost is estimated", "chat", s.id, "step", step,
			"input_tokens", u.InputTokens, "output_tokens", u.OutputTokens, "estimated_tokens", u.Estimated)
	}
	if stream == nil || stream.text.Len() == 0 {
		return
	}
	shown := stream.flush()
	if shown != "" && ctx.Err() != nil && m.ctx.Err() == nil {
		_ = s.appendMessage(llm.Message{Role: llm.RoleAssistant,
			Parts: []llm.Part{{Kind: llm.PartText, Text: capText(shown, maxPartText)}}})
	}
}

// recordAnswer appends the model's answer to the conversation: its text
// redacted and capped, which it returns, and its tool calls made storable
// in place (the runner then runs them as stored).
func (t *turn) recordAnswer(resp *llm.Response) (string, error) {
	answer := llm.Message{Role: llm.RoleAssistant}
	text := capText(t.s.m.o.Redactor.Redact(resp.Text), maxPartText)
	if text != "" {
		answer.Parts = append(answer.Parts, llm.Part{Kind: llm.PartText, Text: text})
	}
	for i := range resp.ToolCalls {
		// The transcript stores only valid JSON, of bounded size; the
		// runner judges the arguments, so a malformed or oversized
		// call gets its error result.
		c := &resp.ToolCalls[i]
		c.ID, c.Name, c.Arguments = capName(c.ID), capName(c.Name), storableArguments(c.Arguments)
	}
	for _, c := range resp.ToolCalls {
		answer.Parts = append(answer.Parts, llm.Part{Kind: llm.PartToolCall, ToolCall: &c})
	}
	if len(answer.Parts) == 0 {
		answer.Parts = []llm.Part{{Kind: llm.PartText, Text: emptyAnswer}}
	}
	return text, t.s.appendMessage(answer)
}

// emptyAnswer is what the chat is sent, and the transcript keeps, of a
// model's answer with neither text nor tool calls: the same words, so an
// answer kept across a restart (sendKeptAnswer) reads as it would have.
const emptyAnswer = "(The model returned an empty answer.)"

// runTools runs the step's calls and appends their results, capped, to
// the conversation; then the disk budget counts what they saved. It
// returns ctx's error once the turn was stopped.
func (t *turn) runTools(ctx context.Context, calls []llm.ToolCall) error {
	results := t.runner.run(ctx, calls)
	capToolResults(results)
	msg := llm.Message{Role: llm.RoleUser}
	for i := range results {
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.PartToolResult, ToolResult: &results[i]})
	}
	if err := t.s.appendMessage(msg); err != nil {
		return err
	}
	t.s.enforceDisk() // the step's calls may have saved files
	return ctx.Err()
}
