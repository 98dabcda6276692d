package llmtest

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Model is a scripted in-memory llm.Model.
type Model struct {
	t testing.TB

	mu       sync.Mutex
	script   script
	requests []llm.Request
}

var _ llm.Model = (*Model)(nil)

// NewModel returns a Model that answers with replies, in order.
func NewModel(t testing.TB, replies ...Reply) *Model {
	m := &Model{t: t}
	m.script.push(replies...)
	return m
}

// Push adds replies to the end of the script.
func (m *Model) Push(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script.push(replies...)
}

// Requests returns the requests received so far, in order.
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.requests...)
}

// Remaining is the number of scripted replies not used yet.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.script.remaining()
}

// Complete answers with the next reply. Like the adapters, it fails with an
// *llm.Error, which wraps the context's error when ctx ends first; and
// like theirs, a failed call's Response carries what a request the
// provider took cost all the same (llm.Model): a call whose context ended
// while it waited for the reply, or whose stream was stopped or broke off
// midway, counts the reply's Usage.InputTokens as its prompt and a token
// for each piece that had streamed, all of it Estimated. A scripted
// Status or Err costs nothing.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, cloneRequest(req))
	n := len(m.requests)
	reply, ok := m.script.pop()
	m.mu.Unlock()
	if !ok {
		m.t.Errorf("llmtest: unexpected model call %d: no reply scripted", n)
		return llm.Response{}, &llm.Error{Provider: "llmtest", Status: http.StatusInternalServerError, Message: "no reply scripted"}
	}
	reply = reply.resolve(Request{LLM: req})
	// cut is what the call cost when it ended after streamed pieces.
	cut := func(streamed int) llm.Response {
		u := llm.Usage{InputTokens: reply.Usage.InputTokens, OutputTokens: streamed}
		u.Estimated = u.InputTokens + u.OutputTokens
		return llm.Response{Usage: u}
	}
	if err := reply.wait(ctx); err != nil {
		return cut(0), &llm.Error{Provider: "llmtest", Message: err.Error(), Err: err}
	}
	switch {
	case reply.Err != nil:
		return llm.Response{}, reply.Err
	case reply.Status != 0 && reply.Status != http.StatusOK:
		msg := reply.Text
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		return llm.Response{}, &llm.Error{Provider: "llmtest", Status: reply.Status, Message: msg}
	}
	if req.OnText != nil {
		streamed := 0
		for i, p := range reply.pieces() {
			if reply.Fail != "" && i == reply.FailAfter {
				break
			}
			if i > 0 {
				if err := sleep(ctx, reply.ChunkDelay); err != nil {
					return cut(streamed), &llm.Error{Provider: "llmtest", Message: err.Error(), Err: err}
				}
			}
			req.OnText(p)
			streamed++
		}
		switch reply.Fail {
		case FailDrop, FailEnd:
			return cut(streamed), &llm.Error{Provider: "llmtest", Status: http.StatusBadGateway, Message: "the stream broke off"}
		case FailEvent:
			return cut(streamed), &llm.Error{Provider: "llmtest", Status: cmp.Or(reply.FailStatus, 500), Message: "in the stream"}
		}
	}
	resp := llm.Response{Text: reply.text(), ToolCalls: reply.ToolCalls, Usage: reply.Usage, StopReason: reply.StopReason}
	if resp.StopReason == "" {
		resp.StopReason = llm.StopEnd
		if len(resp.ToolCalls) > 0 {
			resp.StopReason = llm.StopToolUse
		}
	}
	return resp, nil
}
