package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Server is a scripted fake of a provider's HTTP API. It is closed when the
// test ends.
type Server struct {
	// URL is the base URL to give the adapter: OpenAIOptions.BaseURL (the
	// fake serves …/chat/completions under any prefix) or
	// AnthropicOptions.BaseURL (it serves …/v1/messages).
	URL string

	errorf   func(format string, args ...any)
	provider string
	srv      *httptest.Server
	// always answers when the script is empty (Start); nil: a test
	// failure.
	always func(Request) Reply

	mu       sync.Mutex
	script   script
	requests []Request
}

// NewOpenAI starts a fake OpenAI-compatible chat-completions server.
func NewOpenAI(t testing.TB, replies ...Reply) *Server {
	return newServer(t, llm.ProviderOpenAI, replies)
}

// NewAnthropic starts a fake Anthropic messages server.
//
// Both servers answer a request with "stream": true with server-sent
// events in their provider's shape (see stream.go).
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return newServer(t, llm.ProviderAnthropic, replies)
}

func newServer(t testing.TB, provider string, replies []Reply) *Server {
	t.Helper()
	s := &Server{errorf: t.Errorf, provider: provider}
	s.script.push(replies...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Start starts a fake of provider's API (llm.ProviderOpenAI or
// llm.ProviderAnthropic) outside a test — a benchmark, a tool run by hand:
// reply answers every request that no pushed reply answers, and what would
// fail a test is given to errorf. Close it when done.
func Start(provider string, reply func(Request) Reply, errorf func(format string, args ...any)) *Server {
	s := &Server{errorf: errorf, provider: provider, always: reply}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops a server made by Start.
func (s *Server) Close() { s.srv.Close() }

// Push adds replies to the end of the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script.push(replies...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of scripted replies not used yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.script.remaining()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	endpoint := "/chat/completions"
	if s.provider == llm.ProviderAnthropic {
		endpoint = "/v1/messages"
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, endpoint) {
		s.errorf("llmtest: %s server got %s %s", s.provider, r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, &req.JSON); err != nil {
		s.errorf("llmtest: request body is not a JSON object: %v", err)
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	reply, ok := s.script.pop()
	if !ok && s.always != nil {
		reply, ok = Reply{Func: s.always}, true
	}
	s.mu.Unlock()
	if !ok {
		s.errorf("llmtest: unexpected request %d to the %s server: no reply scripted", n, s.provider)
		w.Header().Set("x-should-retry", "false")
		s.writeError(w, http.StatusInternalServerError, "llmtest: no reply scripted")
		return
	}
	reply = reply.resolve(req)
	if reply.wait(r.Context()) != nil {
		return
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case reply.Err != nil:
		drop(w)
	case reply.Body != "":
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
	case reply.Status != 0 && reply.Status != http.StatusOK:
		msg := reply.Text
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		s.writeError(w, reply.Status, msg)
	case req.JSON["stream"] == true:
		model, _ := req.JSON["model"].(string)
		opts, _ := req.JSON["stream_options"].(map[string]any)
		s.writeStream(w, r, model, n, reply, opts["include_usage"] == true)
	default:
		model, _ := req.JSON["model"].(string)
		reply.Text = reply.text() // the pieces of a stream, at once
		var out any
		if s.provider == llm.ProviderAnthropic {
			out = anthropicMessage(model, n, reply)
		} else {
			out = openAICompletion(model, n, reply)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	var body any
	if s.provider == llm.ProviderAnthropic {
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}}
	} else {
		body = map[string]any{"error": map[string]any{"message": msg, "type": "error", "code": nil}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAICompletion(model string, n int, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []map[string]any
		for _, c := range r.ToolCalls {
			calls = append(calls, map[string]any{
				"id":       c.ID,
				"type":     "function",
				"function": map[string]any{"name": c.Name, "arguments": string(argsOrEmpty(c.Arguments))},
			})
		}
		msg["tool_calls"] = calls
	}
	if r.StopReason != "" {
		finish = r.StopReason
	}
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", n),
		"object":  "chat.completion",
		"created": 0,
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens":     r.Usage.InputTokens,
			"completion_tokens": r.Usage.OutputTokens,
			"total_tokens":      r.Usage.InputTokens + r.Usage.OutputTokens,
			"prompt_tokens_details": map[string]any{
				"cached_tokens":      r.Usage.CacheReadTokens,
				"cache_write_tokens": r.Usage.CacheWriteTokens, // OpenRouter
			},
		},
	}
}

func anthropicMessage(model string, n int, r Reply) map[string]any {
	content := []any{}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	stop := "end_turn"
	for _, c := range r.ToolCalls {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(argsOrEmpty(c.Arguments))})
	}
	if r.StopReason != "" {
		stop = r.StopReason
	}
	return map[string]any{
		"id":            fmt.Sprintf("msg_llmtest_%d", n),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage": map[string]any{
			// Anthropic's input_tokens leaves out what was read from or
			// written to the cache.
			"input_tokens":                max(0, r.Usage.InputTokens-r.Usage.CacheReadTokens-r.Usage.CacheWriteTokens),
			"output_tokens":               r.Usage.OutputTokens,
			"cache_read_input_tokens":     r.Usage.CacheReadTokens,
			"cache_creation_input_tokens": r.Usage.CacheWriteTokens,
		},
	}
}

func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}
