package session

import (
	"context"
	"errors"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// elicitor puts the elicitations of the chat's servers to the chat
// (Elicitor), during a turn: the question ends with the turn (/stop, the
// turn's end) as well as with the call's timeout. An elicitation that
// arrives while no turn runs (a server asking between calls) has nobody
// to answer it and is cancelled.
type elicitor struct {
	s   *session
	ask Elicitor
}

var _ chat.Elicitor = elicitor{}

func (e elicitor) Elicit(ctx context.Context, el chat.Elicitation) (chat.ElicitResult, error) {
	s, m := e.s, e.s.m
	turn, user, ok := s.currentTurn()
	if !ok {
		m.logger.Info("MCP elicitation cancelled: no turn is running to ask in", "chat", s.id, "server", el.Server)
		return chat.ElicitResult{Action: chat.ElicitCancel}, nil
	}
	// The chat's question ends with the turn or with the request; its
	// cause says which: context.Canceled when the turn was stopped (/stop,
	// /new, a shutdown), context.DeadlineExceeded when the time ran out —
	// the request's (the call's timeout), or the turn went on without it
	// (its call ended: by its own timeout, which may come first).
	ask, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	end := func() {
		if errors.Is(context.Cause(turn), errTurnStopped) || m.ctx.Err() != nil {
			cancel(context.Canceled)
			return
		}
		cancel(context.DeadlineExceeded)
	}
	stopTurn := context.AfterFunc(turn, end)
	defer stopTurn()
	stopCall := context.AfterFunc(ctx, end)
	defer stopCall()
	m.logger.Info("MCP elicitation asked", "chat", s.id, "server", el.Server, "mode", el.Mode, "fields", len(el.Form.Fields))
	res, err := e.ask.Elicit(ask, s.id, ElicitRequest{UserID: user, Elicitation: el})
	switch {
	case err != nil && ask.Err() != nil:
		why := "the turn ended"
		if errors.Is(context.Cause(ask), context.DeadlineExceeded) {
			why = "no answer in time"
		}
		m.logger.Info("MCP elicitation cancelled: "+why, "chat", s.id, "server", el.Server)
		return chat.ElicitResult{Action: chat.ElicitCancel}, nil
	case err != nil:
		m.logger.Warn("MCP elicitation not asked", "chat", s.id, "server", el.Server, "err", err)
		return chat.ElicitResult{Action: chat.ElicitCancel}, nil
	}
	// The answers themselves are never logged.
	m.logger.Info("MCP elicitation answered", "chat", s.id, "server", el.Server, "action", res.Action, "fields", len(res.Content))
	return res, nil
}

// errTurnStopped is the cause of a turn's end by /stop or /new.
var errTurnStopped = errors.New("the turn was stopped")

// currentTurn is the running turn's context and the user who started it.
func (s *session) currentTurn() (context.Context, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn == nil || s.turnCtx == nil {
		return nil, 0, false
	}
	return s.turnCtx, s.turnUser, true
}
