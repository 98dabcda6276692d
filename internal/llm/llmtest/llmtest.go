// Package llmtest has scripted fakes of the model for tests: HTTP servers
// that speak the OpenAI chat-completions and Anthropic messages APIs (for
// tests that run the real adapters), and an in-memory llm.Model.
//
// Each fake answers the n-th call with the n-th Reply and fails the test on
// a call it has no reply for.
package llmtest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Reply is one scripted answer. Set Text and/or ToolCalls for an answer;
// Status (with Header) for an HTTP error; Body for a raw body; Err for a
// failure; Func to compute the reply from the request.
type Reply struct {
	Text      string
	ToolCalls []llm.ToolCall
	// StopReason overrides the stop reason: the provider's word for the
	// servers ("stop", "length", "end_turn", "max_tokens", …), the
	// normalised one for Model. Empty: from whether there are tool calls.
	StopReason string
	// Usage is what the adapter should report. The servers put it on the
	// wire as the provider does: chat completions' prompt_tokens is
	// InputTokens, Anthropic's input_tokens leaves the cached tokens out.
	Usage llm.Usage

	// Status, when neither 0 nor 200, makes the servers answer with this
	// HTTP status and an error body in the provider's shape whose message
	// is Text, and Model return an *llm.Error with this Status.
	Status int
	// Header is added to the HTTP response (retry-after, retry-after-ms).
	Header http.Header
	// Body, when set, is sent as it is (with Status, or 200), as JSON.
	Body string
	// Delay holds the answer back, or until the request is cancelled.
	Delay time.Duration
	// Err makes Model return it; the servers drop the connection instead.
	Err error
	// Func computes the reply from the request; the other fields are
	// then ignored.
	Func func(Request) Reply

	// Streamed answers (a request with "stream": true, or an llm.Request
	// with OnText for Model):
	//
	// Chunks is the text in pieces, sent in order; their concatenation is
	// the answer's text (Text is then ignored). Empty: Text in pieces of
	// a word each.
	Chunks []string
	// ChunkDelay is the pause before each piece after the first, cut
	// short when the request is cancelled.
	ChunkDelay time.Duration
	// Fail makes the stream fail after FailAfter pieces of text.
	Fail StreamFailure
	// FailAfter is how many pieces go out before Fail.
	FailAfter int
	// FailStatus is the status of a FailEvent error (default 500).
	FailStatus int
}

// StreamFailure is how a streamed answer fails midway.
type StreamFailure string

const (
	// FailDrop drops the connection (Model: an *llm.Error of status 502).
	FailDrop StreamFailure = "drop"
	// FailEnd ends the stream without the provider's end of the answer.
	FailEnd StreamFailure = "end"
	// FailEvent sends an error event in the provider's shape with
	// FailStatus (Model: an *llm.Error of that status).
	FailEvent StreamFailure = "event"
)

// pieces is the streamed text of r.
func (r Reply) pieces() []string {
	if len(r.Chunks) > 0 {
		return r.Chunks
	}
	var out []string
	rest := r.Text
	for rest != "" {
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:i+1])
		rest = rest[i+1:]
	}
	return out
}

// text is the whole answer's text.
func (r Reply) text() string {
	if len(r.Chunks) > 0 {
		return strings.Join(r.Chunks, "")
	}
	return r.Text
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Request is one request a fake received.
type Request struct {
	// Servers only.
	Method string
	Path   string
	Header http.Header
	Body   []byte         // raw
	JSON   map[string]any // decoded

	// Model only.
	LLM llm.Request
}

// Text replies with text.
func Text(s string) Reply { return Reply{Text: s} }

// ToolCalls replies with tool calls.
func ToolCalls(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Call is a tool call with JSON arguments.
func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Status replies with an HTTP error; header holds name, value pairs:
// Status(429, "retry-after-ms", "10").
func Status(code int, header ...string) Reply {
	r := Reply{Status: code, Header: http.Header{}}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r
}

// Raw replies with status and body as they are.
func Raw(status int, body string) Reply { return Reply{Status: status, Body: body} }

// Func replies with what f computes from the request.
func Func(f func(Request) Reply) Reply { return Reply{Func: f} }

// resolve runs Func, if any.
func (r Reply) resolve(req Request) Reply {
	for r.Func != nil {
		r = r.Func(req)
	}
	return r
}

// wait sleeps r.Delay or until ctx is done.
func (r Reply) wait(ctx context.Context) error {
	if r.Delay <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(r.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// script is the queue of replies shared by the fakes.
type script struct {
	replies []Reply
	next    int
}

func (s *script) push(r ...Reply) { s.replies = append(s.replies, r...) }

// pop returns the next reply, or false when there is none.
func (s *script) pop() (Reply, bool) {
	if s.next >= len(s.replies) {
		return Reply{}, false
	}
	r := s.replies[s.next]
	s.next++
	return r, true
}

func (s *script) remaining() int { return len(s.replies) - s.next }

func cloneRequest(req llm.Request) llm.Request {
	req.Messages = slices.Clone(req.Messages)
	req.Tools = slices.Clone(req.Tools)
	return req
}
