package session

import (
	"context"
	"errors"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// maxSamplingTokens caps what a server's sampling request may make the
// model write (its maxTokens, when larger, is cut to it).
const maxSamplingTokens = 4096

// maxSampling is how many of the sampling requests of a chat's servers
// the model answers at once; the others wait their turn. A server that
// sends fifty at once gets them answered two at a time, each reserving
// its tokens of the allowance before it goes — so the allowance stops
// them once it is used, by one request at most.
const maxSampling = 2

// sampler answers the sampling requests of the chat's servers whose entry
// says "sampling": true with the bot's own model: no tools, the server's
// system prompt and messages. A request made during a turn ends with it
// (/stop, /new). What it costs counts against the allowance of the chat
// and of the user whose turn it serves, and is logged with the chat, like
// the chat's own steps. The answer is redacted before it goes to the
// server.
type sampler struct{ s *session }

var _ chat.Sampler = sampler{}

func (sm sampler) Sample(ctx context.Context, r chat.SamplingRequest) (chat.SamplingResult, error) {
	s, m := sm.s, sm.s.m
	msgs := make([]llm.Message, 0, len(r.Messages))
	for _, msg := range r.Messages {
		out := llm.Message{Role: llm.RoleUser}
		if msg.Role == "assistant" {
			out.Role = llm.RoleAssistant
		}
		for _, c := range msg.Content {
			switch c.Kind {
			case chat.TextPart:
				out.Parts = append(out.Parts, llm.Part{Kind: llm.PartText, Text: c.Text})
			case chat.ImagePart:
				out.Parts = append(out.Parts, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: c.MIMEType, Data: c.Data}})
			}
		}
		if len(out.Parts) == 0 {
			return chat.SamplingResult{}, errors.New("a message without text or image")
		}
		msgs = append(msgs, out)
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 || maxTokens > maxSamplingTokens {
		maxTokens = maxSamplingTokens
	}
	req := llm.Request{Model: s.model(), System: r.SystemPrompt, Messages: agent.MergeAdjacent(msgs), MaxTokens: maxTokens}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // the bot shuts down
	defer stop()
	turn, user, inTurn := s.currentTurn() // whose turn the sampling is counted for (0: none runs)
	if inTurn {
		stopTurn := context.AfterFunc(turn, cancel)
		defer stopTurn()
	}
	select {
	case s.sampling <- struct{}{}:
		defer func() { <-s.sampling }()
	case <-ctx.Done():
		return chat.SamplingResult{}, errors.New("the request ended while it waited for the chat's other sampling requests")
	}
	spent, notice, err := m.reserve(ctx, s.id, user, req)
	if err != nil {
		return chat.SamplingResult{}, errors.New("the request ended while it waited for the chat's allowance")
	}
	if spent == nil {
		if notice != "" {
			s.reply(m.ctx, notice)
		}
		m.logger.Info("MCP sampling refused: a daily allowance is used", "chat", s.id, "server", r.Server)
		return chat.SamplingResult{}, errors.New("the chat's daily allowance is used up")
	}
	callCtx, cancelCall := context.WithTimeout(ctx, m.o.ModelTimeout)
	defer cancelCall()
	resp, err := m.complete(callCtx, req, spent)
	if err != nil {
		m.logger.Warn("MCP sampling failed", "chat", s.id, "server", r.Server, "err", err,
			"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens, "estimated_tokens", resp.Usage.Estimated)
		var le *llm.Error
		if errors.As(err, &le) {
			return chat.SamplingResult{}, errors.New(le.UserMessage())
		}
		return chat.SamplingResult{}, errors.New("the model did not answer")
	}
	m.logger.Info("MCP sampling answered", "chat", s.id, "server", r.Server, "messages", len(msgs),
		"input_tokens", resp.Usage.InputTokens, "cached_tokens", resp.Usage.CacheReadTokens,
		"output_tokens", resp.Usage.OutputTokens, "stop", resp.StopReason)
	stopReason := "endTurn"
	if resp.StopReason == llm.StopMaxTokens {
		stopReason = "maxTokens"
	}
	return chat.SamplingResult{Model: req.Model, Text: m.o.Redactor.Redact(resp.Text), StopReason: stopReason}, nil
}

// complete makes a model request that reserved its tokens, and tells
// spent what it cost — when it failed too (llm.Model says what a failed
// request cost), and when the model panics (nothing: the hold is freed).
func (m *Manager) complete(ctx context.Context, req llm.Request, spent func(llm.Usage)) (resp llm.Response, err error) {
	defer func() { spent(resp.Usage) }()
	return m.o.Model.Complete(ctx, req)
}
