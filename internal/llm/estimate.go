package llm

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
)

// A request that ends early still costs. The provider bills a request it
// took — its prompt, and what the model wrote before the end — whether or
// not the answer arrived: the user's /stop, the caller's deadline, a
// stream broken off. The provider's own count comes only at the end of
// the answer (chat completions' usage chunk, Anthropic's message_delta),
// so for such a request the adapter counts it itself, offline, and says
// so in Usage.Estimated:
//
//   - the prompt: the provider's count when it gave one before the end
//     (Anthropic's message_start carries the input tokens), else the
//     request's system prompt, messages and tool definitions counted with
//     the tokenizer (o200k_base; Anthropic publishes none of its own, and
//     o200k counts within a few percent of it), images at a flat
//     imageTokens each, and a few tokens a message and a tool for the
//     framing;
//   - the answer: the text, tool calls and reasoning that had streamed,
//     counted the same way.
//
// What counts as taken: a streamed answer that had begun (every attempt
// that began, a broken one that was tried again included); and a request
// sent whole that had no answer yet when the caller's context ended
// (stopped or timed out while the model thought), its prompt only. A
// request refused with an HTTP error, or that never reached the provider,
// costs nothing.

// imageTokens is what an image in the prompt is counted as: a typical
// screenshot on either provider.
const imageTokens = 1600

// meter counts what one call that ends early cost.
type meter struct {
	count func(string) int
	req   *Request
	// unanswered is set while a request of the call has been sent whole
	// and no answer to it has begun.
	unanswered atomic.Bool
}

func newMeter(count func(string) int, req *Request) *meter {
	return &meter{count: count, req: req}
}

// watch returns ctx with an HTTP trace that follows the call's attempts.
func (m *meter) watch(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				m.unanswered.Store(true)
			}
		},
		GotFirstResponseByte: func() { m.unanswered.Store(false) },
	})
}

// stopped is the Usage of a call whose context ended before an answer
// began: its prompt, when a request had been sent whole.
func (m *meter) stopped(ctx context.Context) Usage {
	if ctx.Err() == nil || !m.unanswered.Load() {
		return Usage{}
	}
	return m.cut(Usage{}, "")
}

// cut is the Usage of a request the provider took and whose answer ended
// early: known holds what the provider said before the end (its input,
// from Anthropic's message_start; zero: nothing), streamed is what the
// model wrote until then.
func (m *meter) cut(known Usage, streamed string) Usage {
	u := Usage{InputTokens: known.InputTokens, CacheReadTokens: known.CacheReadTokens, CacheWriteTokens: known.CacheWriteTokens}
	if u.InputTokens == 0 {
		u.InputTokens = promptTokens(m.req, m.count)
		u.Estimated = u.InputTokens
	}
	if out := m.count(streamed); out > known.OutputTokens {
		u.OutputTokens = out
		u.Estimated += out
	} else {
		u.OutputTokens = known.OutputTokens
	}
	return u
}

// promptTokens counts what req sends: its system prompt, messages and
// tool definitions.
func promptTokens(req *Request, count func(string) int) int {
	n := count(req.System)
	for _, msg := range req.Messages {
		n += 4 + partsTokens(msg.Parts, count)
	}
	for _, t := range req.Tools {
		n += 8 + count(t.Name) + count(t.Description) + count(string(t.Schema))
	}
	return n
}

func partsTokens(parts []Part, count func(string) int) int {
	n := 0
	for _, p := range parts {
		switch {
		case p.Kind == PartText:
			n += count(p.Text)
		case p.Kind == PartImage:
			n += imageTokens
		case p.ToolCall != nil:
			n += 4 + count(p.ToolCall.Name) + count(string(p.ToolCall.Arguments))
		case p.ToolResult != nil:
			n += 4 + partsTokens(p.ToolResult.Content, count)
		}
	}
	return n
}

// add is u and o together.
func (u Usage) add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		Estimated:        u.Estimated + o.Estimated,
	}
}
