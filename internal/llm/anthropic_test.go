package llm_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

const anthropicKey = "sk-ant-test-0123456789secret"

func newAnthropic(srv *llmtest.Server, tweak ...func(*llm.AnthropicOptions)) *llm.Anthropic {
	o := llm.AnthropicOptions{APIKey: anthropicKey, BaseURL: srv.URL, Model: "claude-test"}
	for _, f := range tweak {
		f(&o)
	}
	return llm.NewAnthropic(o)
}

func TestAnthropicText(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1") // ignored: options only
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Text: "Hello!", Usage: llm.Usage{InputTokens: 20, OutputTokens: 2, CacheReadTokens: 7, CacheWriteTokens: 5}})
	m := newAnthropic(srv)

	resp, err := m.Complete(context.Background(), llm.Request{System: "Be brief.", Messages: []llm.Message{user(text("Hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello!" || resp.StopReason != llm.StopEnd || len(resp.ToolCalls) != 0 {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 2, CacheReadTokens: 7, CacheWriteTokens: 5}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" {
		t.Errorf("path = %s", r.Path)
	}
	if got := r.Header.Get("x-api-key"); got != anthropicKey {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version = %q", got)
	}
	if got := r.Header.Get("traceparent"); got != "" {
		t.Errorf("traceparent = %q, want none", got)
	}
	assertJSON(t, "body", r.JSON, `{
		"model": "claude-test",
		"max_tokens": 8192,
		"system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}]}]
	}`)
}

func TestAnthropicBearerAndVersion(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("ok"))
	m := newAnthropic(srv, func(o *llm.AnthropicOptions) {
		o.AuthHeader = llm.AuthBearer
		o.Version = "2099-01-01"
		o.MaxTokens = 64000 // above what the SDK's Messages.New allows without streaming
	})
	if _, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+anthropicKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("x-api-key"); got != "" {
		t.Errorf("x-api-key = %q, want none", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2099-01-01" {
		t.Errorf("anthropic-version = %q", got)
	}
	if r.JSON["max_tokens"] != float64(64000) {
		t.Errorf("max_tokens = %v", r.JSON["max_tokens"])
	}
}

func TestAnthropicToolRoundTrip(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Text: "Let me check.", ToolCalls: []llm.ToolCall{llmtest.Call("toolu_1", "get_weather", `{"city":"Paris"}`)}},
		llmtest.Text("It is sunny in Paris."),
	)
	m := newAnthropic(srv)
	ctx := context.Background()
	req := llm.Request{
		System:    "You are a bot.",
		Tools:     []llm.Tool{weatherTool, clockTool},
		MaxTokens: 100,
		Messages:  []llm.Message{user(text("Weather in Paris?"))},
	}

	resp, err := m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != llm.StopToolUse || resp.Text != "Let me check." {
		t.Errorf("response = %+v", resp)
	}
	assertCalls(t, resp.ToolCalls, llm.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)})

	req.Messages = append(req.Messages,
		assistant(text(resp.Text), call("toolu_1", "get_weather", `{"city":"Paris"}`)),
		user(result("toolu_1", "get_weather", false, text("sunny, 24°C"))),
	)
	resp, err = m.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "It is sunny in Paris." || resp.StopReason != llm.StopEnd {
		t.Errorf("response = %+v", resp)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := reqs[1]
	assertJSON(t, "messages", second.JSON["messages"], `[
		{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
		{"role": "assistant", "content": [
			{"type": "text", "text": "Let me check."},
			{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny, 24°C"}], "cache_control": {"type": "ephemeral"}}
		]}
	]`)
	assertJSON(t, "system", second.JSON["system"], `[{"type": "text", "text": "You are a bot.", "cache_control": {"type": "ephemeral"}}]`)
	// Cache control on the last tool only.
	assertJSON(t, "tools", second.JSON["tools"], `[
		{"name": "get_weather", "description": "Current weather", "input_schema": `+weatherSchema+`},
		{"name": "clock", "description": "The time", "input_schema": {"type":"object","properties":{}}, "cache_control": {"type": "ephemeral"}}
	]`)
	if second.JSON["max_tokens"] != float64(100) {
		t.Errorf("max_tokens = %v", second.JSON["max_tokens"])
	}
	for i, r := range reqs {
		if !bytes.Contains(r.Body, []byte(`"input_schema":`+weatherSchema)) {
			t.Errorf("request %d does not carry the schema verbatim:\n%s", i, r.Body)
		}
	}
}

func TestAnthropicToolResultImages(t *testing.T) {
	srv := llmtest.NewAnthropic(t, llmtest.Text("I see a cat."))
	m := newAnthropic(srv)
	req := llm.Request{Messages: []llm.Message{
		user(text("Screenshot both pages")),
		assistant(call("toolu_a", "screenshot", `{"page":1}`), call("toolu_b", "screenshot", `{"page":2}`)),
		user(
			text("Also, hurry."), // text goes after the results
			result("toolu_a", "screenshot", false, text("page 1"), image(png)),
			result("toolu_b", "screenshot", true, text("page 2 failed")),
		),
	}}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "messages", srv.Requests()[0].JSON["messages"], `[
		{"role": "user", "content": [{"type": "text", "text": "Screenshot both pages"}]},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "toolu_a", "name": "screenshot", "input": {"page": 1}},
			{"type": "tool_use", "id": "toolu_b", "name": "screenshot", "input": {"page": 2}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_a", "content": [
				{"type": "text", "text": "page 1"},
				{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "`+pngBase64+`"}}
			]},
			{"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": [{"type": "text", "text": "page 2 failed"}]},
			{"type": "text", "text": "Also, hurry.", "cache_control": {"type": "ephemeral"}}
		]}
	]`)
}

func TestAnthropicRetryAfter(t *testing.T) {
	// retry-after-ms: 1000 twice is longer than the SDK's own backoff
	// (0.375–0.5 s, then 0.75–1 s): only the server's wait makes the call
	// last 2 s. (The other way round, 10 ms and an upper bound of 0.7 s,
	// failed when a loaded machine was slower than that.)
	srv := llmtest.NewAnthropic(t,
		llmtest.Status(429, "retry-after-ms", "1000"),
		llmtest.Status(529, "retry-after-ms", "1000"),
		llmtest.Text("ok"))
	start := time.Now()
	resp, err := newAnthropic(srv).Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || len(srv.Requests()) != 3 {
		t.Errorf("text = %q after %d requests", resp.Text, len(srv.Requests()))
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("took %v: retry-after-ms not honoured", d)
	}
}

func TestAnthropicRetriesExhausted(t *testing.T) {
	srv := llmtest.NewAnthropic(t,
		llmtest.Reply{Status: 529, Text: "Overloaded", Header: map[string][]string{"Retry-After-Ms": {"1"}}},
		llmtest.Reply{Status: 529, Text: "Overloaded", Header: map[string][]string{"Retry-After-Ms": {"1"}}},
	)
	m := newAnthropic(srv, func(o *llm.AnthropicOptions) { o.MaxRetries = 1 })
	_, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
	e := asError(t, err)
	if e.Status != 529 || e.Message != "Overloaded" || e.Provider != llm.ProviderAnthropic {
		t.Errorf("error = %v", e)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestAnthropicErrorInOKBody(t *testing.T) {
	overloaded := llmtest.Raw(200, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	overloaded.Header = map[string][]string{"Retry-After-Ms": {"1"}}
	srv := llmtest.NewAnthropic(t, overloaded, llmtest.Text("ok"))
	resp, err := newAnthropic(srv).Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
	if err != nil || resp.Text != "ok" {
		t.Fatalf("response = %+v, %v", resp, err)
	}

	srv = llmtest.NewAnthropic(t, llmtest.Raw(200, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: empty"}}`))
	_, err = newAnthropic(srv).Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
	if e := asError(t, err); e.Status != 400 || e.Message != "messages: empty" {
		t.Errorf("error = %v", e)
	}
}
