package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// The session's side of summaries (the policy is agent's, summary.go):
// each step's request is fitted by agent.Compaction, which asks the chat's
// model for a new summary when the conversation would pass the budget.
// The summary request reserves its tokens of the allowance like the
// turn's own requests (it is counted in /usage), runs within ModelTimeout,
// and its answer is redacted. A summary made goes into the transcript as
// a record of its own (transcriptSummary), after the messages, so that
// the conversation read back after a restart has the same head; the
// messages stay in the transcript whole. The chat is told in the turn's
// progress (NoticeActivity). A summary that cannot be made (an error, a
// timeout, the allowance used up) is logged, and the request is trimmed
// as before.

// NoticeActivity is an Activity that shows a line of its own among the
// progress of the turn (the bot's does). A summary made is told there,
// once; an activity that is not one does not show it.
type NoticeActivity interface {
	Activity
	Notice(text string)
}

// summaryNotice is what the progress says of a summary made.
const summaryNotice = "📝 summarised the earlier conversation (%d messages) to stay within the context window"

// errSummaryRefused is a summary the allowance did not allow.
var errSummaryRefused = errors.New("the daily token allowance is used up")

// fit returns the step's messages fitted to the context budget: the
// chat's summary at their head, made anew first when they would pass the
// budget; trimmed when they still do (agent.Compaction.Fit). err is ctx's
// when the turn was stopped while the summary was made. A summary
// that failed is not tried again in the same turn (a model that times out
// would hold every step up). With summaries off, trimmed only.
func (t *turn) fit(ctx context.Context, msgs []llm.Message, fixed int) ([]llm.Message, error) {
	s, m := t.s, t.s.m
	c := agent.Compaction{History: msgs, Current: t.current, Fixed: fixed, Limit: m.o.ContextTokens}
	if m.o.NoSummaries {
		return c.Fit(), nil
	}
	c.Summary = s.summary
	if t.unsummarised {
		return c.Fit(), nil // tried in this turn: the next turn tries again
	}
	sum, made, err := agent.Summarise(ctx, c, t.summarise)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err() // the turn was stopped: no request
	case err != nil:
		t.unsummarised = true
		m.logger.Warn("conversation not summarised: the request is trimmed instead", "chat", s.id,
			"messages", len(msgs), "summarised_before", c.Summary.Covers, "err", err)
	case made:
		s.keepSummary(sum)
		if n, ok := t.runner.activity.(NoticeActivity); ok {
			n.Notice(fmt.Sprintf(summaryNotice, sum.Covers-c.Summary.Covers))
		}
	}
	c.Summary = s.summary
	return c.Fit(), nil
}

// summarise makes a summary request with the chat's model (the turn's):
// what it may cost reserved of the allowances of the chat and of the
// turn's user, as a step's is.
func (t *turn) summarise(ctx context.Context, req llm.Request) (llm.Response, error) {
	s, m := t.s, t.s.m
	req.Model = t.model // the chat's, as its turn's
	spent, notice, err := m.reserve(ctx, s.id, t.in.from, req)
	if err != nil {
		return llm.Response{}, err
	}
	if spent == nil {
		// The step's own request is refused next, without a notice:
		// the chat is told here, once.
		if notice != "" {
			s.reply(m.ctx, notice)
		}
		return llm.Response{}, errSummaryRefused
	}
	callCtx, cancel := context.WithTimeout(ctx, m.o.ModelTimeout)
	defer cancel()
	resp, err := m.complete(callCtx, req, spent)
	if err != nil {
		return resp, err
	}
	m.logger.Info("conversation summarised", "chat", s.id, "input_tokens", resp.Usage.InputTokens,
		"cached_tokens", resp.Usage.CacheReadTokens, "output_tokens", resp.Usage.OutputTokens, "stop", resp.StopReason)
	resp.Text = capText(m.o.Redactor.Redact(resp.Text), maxPartText)
	return resp, nil
}

// keepSummary makes sum the conversation's head and saves it in the
// transcript. One that cannot be saved (a full disk) is used all the
// same: the conversation read back without it is summarised again.
func (s *session) keepSummary(sum agent.Summary) {
	s.summary = sum
	if err := s.tr.appendSummary(sum); err != nil {
		s.m.logger.Warn("summary not saved: a restart makes it again", "chat", s.id, "err", err)
	}
}
