package llm_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

const openAIKey = "sk-test-0123456789secret"

// newOpenAI returns the adapter pointed at srv, with waits between
// retries cut short.
func newOpenAI(srv *llmtest.Server, tweak ...func(*llm.OpenAIOptions)) *llm.OpenAI {
	o := llm.OpenAIOptions{APIKey: openAIKey, BaseURL: srv.URL + "/v1", Model: "gpt-test", MaxRetryDelay: 10 * time.Millisecond}
	for _, f := range tweak {
		f(&o)
	}
	return llm.NewOpenAI(o)
}

func TestOpenAIText(t *testing.T) {
	// The adapter reads no environment: everything comes from the options.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_KEY", "from-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Text: "Hello!", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3, CacheReadTokens: 4}})
	m := newOpenAI(srv, func(o *llm.OpenAIOptions) { o.MaxTokens = 256; o.Headers = map[string]string{"X-Title": "volcanicbot"} })

	resp, err := m.Complete(context.Background(), llm.Request{System: "Be brief.", Messages: []llm.Message{user(text("Hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello!" || resp.StopReason != llm.StopEnd || len(resp.ToolCalls) != 0 {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 3, CacheReadTokens: 4}) {
		t.Errorf("usage = %+v", resp.Usage)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+openAIKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization = %q, want none", got)
	}
	if got := r.Header.Get("X-Title"); got != "volcanicbot" {
		t.Errorf("X-Title = %q", got)
	}
	assertJSON(t, "body", r.JSON, `{
		"model": "gpt-test",
		"max_tokens": 256,
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "Hi"}
		]}`)
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	m := newOpenAI(srv, func(o *llm.OpenAIOptions) { o.APIKey = "" })
	if _, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}

func TestOpenAIToolRoundTrip(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCalls(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
		llmtest.Text("It is sunny in Paris."),
	)
	m := newOpenAI(srv)
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
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q", resp.StopReason)
	}
	assertCalls(t, resp.ToolCalls, llm.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)})

	req.Messages = append(req.Messages,
		assistant(text("Let me check."), call("call_1", "get_weather", `{"city":"Paris"}`)),
		user(result("call_1", "get_weather", false, text("sunny, 24°C"))),
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
		{"role": "system", "content": "You are a bot."},
		{"role": "user", "content": "Weather in Paris?"},
		{"role": "assistant", "content": "Let me check.", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "content": "sunny, 24°C"}
	]`)
	assertJSON(t, "tools", second.JSON["tools"], `[
		{"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": `+weatherSchema+`}},
		{"type": "function", "function": {"name": "clock", "description": "The time", "parameters": {"type":"object","properties":{}}}}
	]`)
	if second.JSON["max_tokens"] != float64(100) {
		t.Errorf("max_tokens = %v", second.JSON["max_tokens"])
	}
	// The schema goes out byte for byte, key order included.
	for i, r := range reqs {
		if !bytes.Contains(r.Body, []byte(`"parameters":`+weatherSchema)) {
			t.Errorf("request %d does not carry the schema verbatim:\n%s", i, r.Body)
		}
	}
}

func TestOpenAIToolResultImages(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("I see a cat."))
	m := newOpenAI(srv)
	req := llm.Request{Messages: []llm.Message{
		user(text("Screenshot both pages")),
		assistant(call("call_a", "screenshot", `{"page":1}`), call("call_b", "screenshot", `{"page":2}`)),
		user(
			result("call_a", "screenshot", false, text("page 1"), image(png)),
			result("call_b", "screenshot", true, text("page 2 failed")),
		),
	}}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "messages", srv.Requests()[0].JSON["messages"], `[
		{"role": "user", "content": "Screenshot both pages"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_a", "type": "function", "function": {"name": "screenshot", "arguments": "{\"page\":1}"}},
			{"id": "call_b", "type": "function", "function": {"name": "screenshot", "arguments": "{\"page\":2}"}}
		]},
		{"role": "tool", "tool_call_id": "call_a", "content": "page 1\n[image attached below]"},
		{"role": "tool", "tool_call_id": "call_b", "content": "ERROR: page 2 failed"},
		{"role": "user", "content": [
			{"type": "text", "text": "Image(s) returned by the tool call call_a (screenshot):"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,`+pngBase64+`"}}
		]}
	]`)
}

func TestOpenAIUserImage(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("A cat."))
	m := newOpenAI(srv)
	unsupported := llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: "image/bmp", Data: []byte{1}}}
	req := llm.Request{Messages: []llm.Message{user(text("What is this?"), image(png), unsupported)}}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "messages", srv.Requests()[0].JSON["messages"], `[
		{"role": "user", "content": [
			{"type": "text", "text": "What is this?"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,`+pngBase64+`"}},
			{"type": "text", "text": "[image of type \"image/bmp\" omitted: the model accepts PNG, JPEG, GIF and WebP]"}
		]}
	]`)
}

func TestOpenAIToolCallShapes(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []llm.ToolCall
		stop string
		text string
	}{{
		name: "several calls",
		body: `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}},
			{"id":"call_3","type":"function","function":{"name":"clock","arguments":""}}]}}]}`,
		want: []llm.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)},
			{ID: "call_2", Name: "get_weather", Arguments: []byte(`{"city":"Rome"}`)},
			{ID: "call_3", Name: "clock", Arguments: []byte(`{}`)},
		},
		stop: llm.StopToolUse,
		text: "Checking.",
	}, {
		// Ollama: no index, arguments as an object, finish_reason "stop".
		name: "ollama",
		body: `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"","tool_calls":[
			{"id":"call_x","function":{"name":"get_weather","arguments":{"city":"Oslo"}}},
			{"id":"call_y","function":{"name":"clock","arguments":"{}"}}]}}]}`,
		want: []llm.ToolCall{
			{ID: "call_x", Name: "get_weather", Arguments: []byte(`{"city":"Oslo"}`)},
			{ID: "call_y", Name: "clock", Arguments: []byte(`{}`)},
		},
		stop: llm.StopToolUse,
	}, {
		name: "no finish reason",
		body: `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}}]}`,
		stop: llm.StopEnd,
		text: "Hi there",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, llmtest.Raw(200, tt.body))
			resp, err := newOpenAI(srv).Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("go"))}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tt.stop || resp.Text != tt.text {
				t.Errorf("stop = %q, text = %q; want %q, %q", resp.StopReason, resp.Text, tt.stop, tt.text)
			}
			assertCalls(t, resp.ToolCalls, tt.want...)
		})
	}
}

func TestOpenAIToolCallWithoutID(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Raw(200, `{"choices":[{"message":{"tool_calls":[
		{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"{\"x\": 1"}}]}}]}`))
	resp, err := newOpenAI(srv).Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("go"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID == "" || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
		t.Fatalf("calls = %+v, want two with distinct ids", resp.ToolCalls)
	}
	// Broken arguments stay valid JSON: the text, as a string.
	if got := string(resp.ToolCalls[1].Arguments); got != `"{\"x\": 1"` {
		t.Errorf("arguments = %s", got)
	}
}

func TestOpenAIErrorBodies(t *testing.T) {
	tests := []struct {
		name    string
		replies []llmtest.Reply
		status  int
		message string
		calls   int
	}{{
		name: "openrouter upstream error is retried",
		replies: []llmtest.Reply{
			llmtest.Raw(200, `{"error":{"message":"Provider returned error","code":502}}`),
			llmtest.Raw(200, `{"error":{"message":"Provider returned error","code":502}}`),
		},
		status:  502,
		message: "Provider returned error",
		calls:   2,
	}, {
		name:    "bare string",
		replies: []llmtest.Reply{llmtest.Raw(200, `{"error":"model \"llama9\" not found"}`), llmtest.Raw(200, `{"error":"model \"llama9\" not found"}`)},
		status:  502,
		message: `model "llama9" not found`,
		calls:   2,
	}, {
		name:    "error in the choice",
		replies: []llmtest.Reply{llmtest.Raw(200, `{"choices":[{"finish_reason":"error","error":{"message":"upstream timeout","code":504},"message":{"content":""}}]}`)},
		status:  504,
		message: "upstream timeout",
		calls:   1,
	}, {
		name:    "ollama 404",
		replies: []llmtest.Reply{llmtest.Raw(404, `{"error":"model \"llama9\" not found, try pulling it first"}`)},
		status:  404,
		message: `model "llama9" not found, try pulling it first`,
		calls:   1,
	}, {
		name:    "html from a proxy",
		replies: []llmtest.Reply{llmtest.Raw(403, `<html><body>Forbidden by proxy</body></html>`)},
		status:  403,
		message: "Forbidden",
		calls:   1,
	}, {
		name:    "no choices",
		replies: []llmtest.Reply{llmtest.Raw(200, `{"id":"x","choices":[]}`)},
		status:  502,
		message: "response without choices",
		calls:   1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, tt.replies...)
			m := newOpenAI(srv, func(o *llm.OpenAIOptions) { o.MaxRetries = 1 })
			_, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
			e := asError(t, err)
			if e.Status != tt.status || e.Message != tt.message {
				t.Errorf("error = %d %q, want %d %q", e.Status, e.Message, tt.status, tt.message)
			}
			if n := len(srv.Requests()); n != tt.calls {
				t.Errorf("%d requests, want %d", n, tt.calls)
			}
		})
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	m := llm.NewOpenAI(llm.OpenAIOptions{APIKey: openAIKey, BaseURL: "http://127.0.0.1:1/v1", Model: "m", MaxRetries: -1})
	_, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}})
	e := asError(t, err)
	if e.Status != 0 || !strings.Contains(e.UserMessage(), "could not be reached") {
		t.Errorf("error = %v, user message %q", e, e.UserMessage())
	}
}

func TestOpenAIOfficialMaxCompletionTokens(t *testing.T) {
	// Only api.openai.com gets max_completion_tokens; reach the fake through
	// a transport that redirects the host.
	srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
	m := llm.NewOpenAI(llm.OpenAIOptions{APIKey: openAIKey, Model: "gpt-test", MaxTokens: 64, HTTPClient: redirectTo(srv.URL)})
	if _, err := m.Complete(context.Background(), llm.Request{Messages: []llm.Message{user(text("Hi"))}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.JSON["max_completion_tokens"] != float64(64) || r.JSON["max_tokens"] != nil {
		t.Errorf("body = %s", r.Body)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
}

// Streamed tool calls in the shapes OpenAI-compatible servers send them.
func TestOpenAIStreamedToolCallShapes(t *testing.T) {
	sse := func(chunks ...string) llmtest.Reply {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString("data: " + c + "\n\n")
		}
		b.WriteString("data: [DONE]\n\n")
		r := llmtest.Raw(200, b.String())
		r.Header = map[string][]string{"Content-Type": {"text/event-stream"}}
		return r
	}
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  []llm.ToolCall
		text  string
	}{{
		name: "by index, arguments in pieces",
		reply: sse(`{"choices":[{"index":0,"delta":{"content":"Checking."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"clock","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		want: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}, {ID: "call_2", Name: "clock", Arguments: []byte(`{}`)}},
		text: "Checking.",
	}, {
		// Gemini, Ollama: whole calls without index, told apart by id;
		// arguments as an object; finish_reason "stop".
		name: "without index",
		reply: sse(`{"choices":[{"delta":{"tool_calls":[{"id":"call_x","function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"id":"call_y","function":{"name":"clock","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"stop"}]}`),
		want: []llm.ToolCall{{ID: "call_x", Name: "get_weather", Arguments: []byte(`{"city":"Oslo"}`)}, {ID: "call_y", Name: "clock", Arguments: []byte(`{}`)}},
	}, {
		name:  "a server that ignores stream answers in one piece",
		reply: llmtest.Raw(200, `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"all at once"}}]}`),
		text:  "all at once",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, tt.reply)
			var got strings.Builder
			resp, err := newOpenAI(srv).Complete(context.Background(), llm.Request{
				Messages: []llm.Message{user(text("go"))}, OnText: func(s string) { got.WriteString(s) }})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tt.text || got.String() != tt.text {
				t.Errorf("text = %q, streamed %q; want %q", resp.Text, got.String(), tt.text)
			}
			want := llm.StopEnd
			if len(tt.want) > 0 {
				want = llm.StopToolUse
			}
			if resp.StopReason != want {
				t.Errorf("stop = %q, want %q", resp.StopReason, want)
			}
			assertCalls(t, resp.ToolCalls, tt.want...)
		})
	}
}
