package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// What the model reads when a call it asked for was not run.
const (
	deniedResult    = "The user denied this call."
	cannotAskResult = "This call needs a user's approval, which could not be asked for, so it was not run."
	stoppedResult   = "cancelled: the user stopped this turn"
)

// mayRun is the approval rule of the call (by the model's name for the
// tool, name) of a tool guarded by g, and whether the call may run without
// asking: its server (gone from the settings: nothing to apply) lets it run
// freely, or it was approved "always in this chat" before.
func (s *session) mayRun(g chat.Guard, name string) (mcpconfig.Rule, bool) {
	m := s.m
	cfg, ok := m.o.MCP.Server(g.Server)
	if !ok {
		return mcpconfig.RunFreely, true
	}
	rule := cfg.ApprovalFor(g.Tool, name, g.Annotations.ReadOnly())
	switch {
	case rule == mcpconfig.RunFreely:
		return rule, true
	case rule == mcpconfig.AskFirst && m.grants.has(m.grantsPath(s.id), g.Server, g.Tool, m.logger):
		return rule, true
	}
	return rule, false
}

// approve decides whether the call (by the model's name for the tool,
// name) of a tool guarded by g, with args, may run under g's server's
// approval rule: at once, after an "always in this chat" given before, or
// after asking the chat (user started the turn). When it may not, the text
// is the call's result for the model.
func (s *session) approve(ctx context.Context, g chat.Guard, name string, args json.RawMessage, user int64) (bool, string) {
	m := s.m
	rule, free := s.mayRun(g, name)
	if free {
		return true, ""
	}
	ap, ok := m.o.Chat.(Approver)
	if !ok {
		m.logger.Warn("a tool call needs approval, and the chat cannot ask", "chat", s.id, "server", g.Server, "tool", g.Tool)
		return false, cannotAskResult
	}
	req := ApprovalRequest{
		UserID: user, Server: g.Server, Tool: g.Tool, Exposed: name, Annotations: g.Annotations,
		Arguments: json.RawMessage(m.o.Redactor.Redact(string(args))), OfferAlways: rule == mcpconfig.AskFirst,
		Timeout: m.o.ApprovalTimeout,
	}
	decision, err := ap.Approve(ctx, s.id, req)
	switch {
	case err == nil && decision == ApprovedAlways:
		if err := m.grants.add(m.grantsPath(s.id), g.Server, g.Tool, user, m.o.Now()); err != nil {
			m.logger.Warn("\"always in this chat\" not saved: this call runs, the next one asks again", "chat", s.id, "err", err)
		}
		m.logger.Info("tool approved for this chat", "chat", s.id, "server", g.Server, "tool", g.Tool, "user", user)
		return true, ""
	case err == nil && decision == Approved:
		m.logger.Info("tool call approved", "chat", s.id, "server", g.Server, "tool", g.Tool)
		return true, ""
	case err == nil:
		m.logger.Info("tool call denied", "chat", s.id, "server", g.Server, "tool", g.Tool)
		return false, deniedResult
	case errors.Is(err, ErrNoApproval):
		m.logger.Info("tool call denied: no answer in time", "chat", s.id, "server", g.Server, "tool", g.Tool)
		return false, "The user denied this call: nobody approved it within " + DurationText(m.o.ApprovalTimeout) + "."
	case ctx.Err() != nil:
		return false, stoppedResult
	}
	m.logger.Warn("approval not asked", "chat", s.id, "server", g.Server, "tool", g.Tool, "err", err)
	return false, cannotAskResult
}

// DurationText says d in words, as the chat and the model read it: in the
// largest unit that measures it exactly — "5 minutes", "90 seconds",
// "1 hour" —, in seconds otherwise (rounded).
func DurationText(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	case d > 0 && d < time.Second:
		return "less than a second"
	}
	return plural(int(d.Round(time.Second)/time.Second), "second")
}
