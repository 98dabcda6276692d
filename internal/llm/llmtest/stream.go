package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// writeStream answers a streamed request: the text in r's pieces (with
// r.ChunkDelay between them), then the tool calls (their arguments in two
// pieces, to exercise accumulation), the stop reason and the usage, as
// the provider streams them — or r.Fail after r.FailAfter pieces. Chat
// completions sends the usage only when stream_options asks for it.
func (s *Server) writeStream(w http.ResponseWriter, req *http.Request, model string, n int, r Reply, includeUsage bool) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	anthropic := s.provider == llm.ProviderAnthropic
	event := func(typ string, v any) {
		b, _ := json.Marshal(v)
		if anthropic {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		} else {
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	id := fmt.Sprintf("chatcmpl-llmtest-%d", n)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	block := 0
	if anthropic {
		event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": fmt.Sprintf("msg_llmtest_%d", n), "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens":                max(0, r.Usage.InputTokens-r.Usage.CacheReadTokens-r.Usage.CacheWriteTokens),
				"output_tokens":               1,
				"cache_read_input_tokens":     r.Usage.CacheReadTokens,
				"cache_creation_input_tokens": r.Usage.CacheWriteTokens,
			},
		}})
		event("ping", map[string]any{"type": "ping"})
	} else {
		event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
	pieces := r.pieces()
	for i, p := range pieces {
		if r.Fail != "" && i == r.FailAfter {
			break
		}
		if i > 0 && sleep(req.Context(), r.ChunkDelay) != nil {
			return
		}
		if anthropic {
			if i == 0 {
				event("content_block_start", map[string]any{"type": "content_block_start", "index": block,
					"content_block": map[string]any{"type": "text", "text": ""}})
			}
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		} else {
			event("", chunk(map[string]any{"content": p}, nil))
		}
	}
	switch r.Fail {
	case FailDrop:
		drop(w)
		return
	case FailEnd:
		return
	case FailEvent:
		status := cmp.Or(r.FailStatus, http.StatusInternalServerError)
		if anthropic {
			event("error", map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": "stream failed"}})
		} else {
			event("", map[string]any{"error": map[string]any{"message": "stream failed", "code": status}})
		}
		return
	}
	if anthropic && len(pieces) > 0 {
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		block++
	}
	stop := "end_turn"
	finish := "stop"
	for i, c := range r.ToolCalls {
		stop, finish = "tool_use", "tool_calls"
		a, b := halves(string(argsOrEmpty(c.Arguments)))
		if anthropic {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": block,
				"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
			if len(c.Arguments) > 0 {
				for _, part := range []string{a, b} {
					event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
						"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
				}
			}
			event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
			block++
			continue
		}
		event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": a}}}}, nil))
		event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": b}}}}, nil))
	}
	if r.StopReason != "" {
		stop, finish = r.StopReason, r.StopReason
	}
	if anthropic {
		event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}})
		event("message_stop", map[string]any{"type": "message_stop"})
		return
	}
	event("", chunk(map[string]any{}, finish))
	if includeUsage {
		event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []any{},
			"usage": map[string]any{
				"prompt_tokens":     r.Usage.InputTokens,
				"completion_tokens": r.Usage.OutputTokens,
				"total_tokens":      r.Usage.InputTokens + r.Usage.OutputTokens,
				"prompt_tokens_details": map[string]any{
					"cached_tokens":      r.Usage.CacheReadTokens,
					"cache_write_tokens": r.Usage.CacheWriteTokens,
				},
			}})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// halves cuts s in two at a rune boundary near its middle.
func halves(s string) (string, string) {
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], s[i:]
}
