package llmtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

func TestModel(t *testing.T) {
	m := llmtest.NewModel(t,
		llmtest.ToolCalls(llmtest.Call("c1", "clock", `{}`)),
		llmtest.Func(func(r llmtest.Request) llmtest.Reply {
			return llmtest.Text("you said " + r.LLM.Messages[0].Parts[0].Text)
		}),
		llmtest.Status(429),
		llmtest.Reply{Text: "slow", Delay: time.Minute},
	)
	ctx := context.Background()
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "hi"}}}}}

	resp, err := m.Complete(ctx, req)
	if err != nil || resp.StopReason != llm.StopToolUse || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "clock" {
		t.Fatalf("1: %+v, %v", resp, err)
	}
	resp, err = m.Complete(ctx, req)
	if err != nil || resp.Text != "you said hi" || resp.StopReason != llm.StopEnd {
		t.Fatalf("2: %+v, %v", resp, err)
	}
	_, err = m.Complete(ctx, req)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 429 {
		t.Fatalf("3: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err = m.Complete(cctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("4: %v", err)
	}
	if n := len(m.Requests()); n != 4 || m.Remaining() != 0 {
		t.Errorf("%d requests, %d replies left", n, m.Remaining())
	}
}

func TestServerWithAdapters(t *testing.T) {
	ctx := context.Background()
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "hi"}}}}}
	echo := llmtest.Func(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("model " + r.JSON["model"].(string))
	})

	o := llmtest.NewOpenAI(t, llmtest.Reply{Err: errors.New("drop")}, echo)
	resp, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: o.URL, Model: "m1", MaxRetryDelay: time.Millisecond}).Complete(ctx, req)
	if err != nil || resp.Text != "model m1" {
		t.Fatalf("openai: %+v, %v", resp, err)
	}
	if n := len(o.Requests()); n != 2 {
		t.Errorf("openai: %d requests, want 2 (a dropped connection is retried)", n)
	}

	a := llmtest.NewAnthropic(t, echo)
	a.Push(llmtest.ToolCalls(llmtest.Call("t1", "clock", `{"tz":"UTC"}`)))
	am := llm.NewAnthropic(llm.AnthropicOptions{BaseURL: a.URL, Model: "m2"})
	if resp, err = am.Complete(ctx, req); err != nil || resp.Text != "model m2" {
		t.Fatalf("anthropic: %+v, %v", resp, err)
	}
	if resp, err = am.Complete(ctx, req); err != nil || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{"tz":"UTC"}` {
		t.Fatalf("anthropic: %+v, %v", resp, err)
	}
}

// Model keeps the adapters' promise for a call that ends early: what the
// provider took is counted, estimated; what it refused is not.
func TestModelCountsUnfinishedCalls(t *testing.T) {
	usage := llm.Usage{InputTokens: 300, OutputTokens: 90}
	m := llmtest.NewModel(t,
		llmtest.Reply{Chunks: []string{"a ", "b ", "c ", "d "}, Fail: llmtest.FailDrop, FailAfter: 2, Usage: usage},
		llmtest.Reply{Chunks: []string{"a ", "b ", "c ", "d "}, ChunkDelay: time.Hour, Usage: usage},
		llmtest.Reply{Text: "late", Delay: time.Hour, Usage: usage},
		llmtest.Reply{Status: 429, Usage: usage},
	)
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "hi"}}}}}
	streamed := req
	streamed.OnText = func(string) {}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopping := streamed
	stopping.OnText = func(string) { cancel() } // /stop once the first piece is shown
	tests := []struct {
		name string
		ctx  context.Context
		req  llm.Request
		want llm.Usage
	}{
		{"broken off after two pieces", context.Background(), streamed, llm.Usage{InputTokens: 300, OutputTokens: 2, Estimated: 302}},
		{"stopped after one piece", ctx, stopping, llm.Usage{InputTokens: 300, OutputTokens: 1, Estimated: 301}},
		{"stopped before the answer", ctx, req, llm.Usage{InputTokens: 300, Estimated: 300}},
		{"refused", context.Background(), req, llm.Usage{}},
	}
	for _, tt := range tests {
		resp, err := m.Complete(tt.ctx, tt.req)
		if err == nil || resp.Usage != tt.want {
			t.Errorf("%s: usage %+v, %v; want %+v and an error", tt.name, resp.Usage, err, tt.want)
		}
	}
}
