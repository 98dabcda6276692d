package session

import (
	"context"
	"errors"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// maxSamplingTokens caps what a server's sampling request may make the
// model write (its maxTokens, when larger, is cut to it).
const maxSamplingTokens = 4096

// sampler answers the sampling requests of the chat's servers whose entry
// says "sampling": true with the bot's own model: no tools, the server's
// system prompt and messages. What it costs is logged with the chat, like
// the chat's own steps. The answer is redacted before it goes to the
// server.
type sampler struct{ s *session }

var _ mcpclient.Sampler = sampler{}

func (sm sampler) Sample(ctx context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
	m := sm.s.m
	msgs := make([]llm.Message, 0, len(r.Messages))
	for _, msg := range r.Messages {
		out := llm.Message{Role: llm.RoleUser}
		if msg.Role == "assistant" {
			out.Role = llm.RoleAssistant
		}
		for _, c := range msg.Content {
			switch c.Type {
			case mcpclient.ContentText:
				out.Parts = append(out.Parts, llm.Part{Kind: llm.PartText, Text: c.Text})
			case mcpclient.ContentImage:
				out.Parts = append(out.Parts, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: c.MIMEType, Data: c.Data}})
			}
		}
		if len(out.Parts) == 0 {
			return mcpclient.SamplingResult{}, errors.New("a message without text or image")
		}
		msgs = append(msgs, out)
	}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 || maxTokens > maxSamplingTokens {
		maxTokens = maxSamplingTokens
	}
	_, user, _ := sm.s.currentTurn() // whose turn the sampling is counted for (0: none runs)
	if ok, notice := m.o.Allowance.Allow(sm.s.id, user); !ok {
		if notice != "" {
			sm.s.reply(m.ctx, notice)
		}
		m.logger.Info("MCP sampling refused: the daily token allowance is used", "chat", sm.s.id, "server", r.Server)
		return mcpclient.SamplingResult{}, errors.New("the chat's daily token allowance is used up")
	}
	ctx, cancel := context.WithTimeout(ctx, m.o.ModelTimeout)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // the bot shuts down
	defer stop()
	resp, err := m.o.Model.Complete(ctx, llm.Request{System: r.SystemPrompt, Messages: mergeAdjacent(msgs), MaxTokens: maxTokens})
	if err != nil {
		m.logger.Warn("MCP sampling failed", "chat", sm.s.id, "server", r.Server, "err", err)
		var le *llm.Error
		if errors.As(err, &le) {
			return mcpclient.SamplingResult{}, errors.New(le.UserMessage())
		}
		return mcpclient.SamplingResult{}, errors.New("the model did not answer")
	}
	m.o.Allowance.Record(sm.s.id, user, resp.Usage)
	m.logger.Info("MCP sampling answered", "chat", sm.s.id, "server", r.Server, "messages", len(msgs),
		"input_tokens", resp.Usage.InputTokens, "cached_tokens", resp.Usage.CacheReadTokens,
		"output_tokens", resp.Usage.OutputTokens, "stop", resp.StopReason)
	stopReason := "endTurn"
	if resp.StopReason == llm.StopMaxTokens {
		stopReason = "maxTokens"
	}
	return mcpclient.SamplingResult{Model: m.o.ModelName, Text: m.o.Redactor.Redact(resp.Text), StopReason: stopReason}, nil
}
