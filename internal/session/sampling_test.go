package session

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A server whose entry says "sampling": true gets its sampling request
// answered by the chat's model: its system prompt and messages, no tools,
// its maxTokens; the answer is redacted. Without the entry's consent the
// request is refused and the model is not asked.
func TestSamplingUsesTheChatsModel(t *testing.T) {
	for _, allowed := range []bool{true, false} {
		t.Run(map[bool]string{true: "allowed", false: "refused"}[allowed], func(t *testing.T) {
			var mu sync.Mutex
			var sampled []llm.Request
			var result string
			answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
				mu.Lock()
				defer mu.Unlock()
				if req.System == "Answer briefly." {
					sampled = append(sampled, req)
					return llm.Response{Text: "forty-two, and the key is sk-samplingsecret1234", StopReason: llm.StopEnd}, nil
				}
				if res := llmtest.LastToolResults(req); len(res) > 0 {
					result = llmtest.ResultText(res[0])
					return llm.Response{Text: "done"}, nil
				}
				return llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: fakemcp.ToolSample, Arguments: []byte(`{"prompt":"the answer?"}`)}}}, nil
			}
			e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeAsk}, sampling: allowed, secrets: []string{"sk-samplingsecret1234"}})
			e.deliver(chat.In(40), "ask the server")
			e.chat.waitTexts(t, chat.In(40), 1)
			mu.Lock()
			defer mu.Unlock()
			if !allowed {
				if len(sampled) != 0 || !strings.Contains(result, "sampling") {
					t.Errorf("refused: the model was asked %d times; the tool said %q", len(sampled), result)
				}
				return
			}
			if len(sampled) != 1 {
				t.Fatalf("the model was asked %d times for the server", len(sampled))
			}
			req := sampled[0]
			if len(req.Tools) != 0 || req.MaxTokens != 100 || len(req.Messages) != 1 || req.Messages[0].Parts[0].Text != "the answer?" {
				t.Errorf("sampling request %+v", req)
			}
			if strings.Contains(result, "sk-samplingsecret1234") || !strings.HasPrefix(result, "model script-model: forty-two") {
				t.Errorf("the server got %q", result)
			}
		})
	}
}
