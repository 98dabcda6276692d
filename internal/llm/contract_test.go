package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The contract: what the agent loop may expect of any llm.Model adapter.
// TestContract runs every case against both adapters through their fake
// HTTP servers. Where the adapters differ by design (their wire formats do),
// the case says so in differs, and the difference is read back through
// contractAdapter.sent, which decodes a request body into the same terms for
// both. The adapter tests (openai_test.go, anthropic_test.go) check the
// wire details of each.

// contractAdapter is one adapter under the contract.
type contractAdapter struct {
	name string
	key  string
	// serve starts the adapter's fake server.
	serve func(testing.TB, ...llmtest.Reply) *llmtest.Server
	// model returns the adapter, with its defaults, pointed at srv.
	model func(srv *llmtest.Server, retries int) llm.Model
	// maxTokens is the provider's stop reason for an answer cut at the
	// token limit.
	maxTokens string
	// sent reads a request body back.
	sent func(t *testing.T, body []byte) sent
}

var contractAdapters = []contractAdapter{{
	name:  llm.ProviderOpenAI,
	key:   openAIKey,
	serve: llmtest.NewOpenAI,
	model: func(srv *llmtest.Server, retries int) llm.Model {
		return llm.NewOpenAI(llm.OpenAIOptions{APIKey: openAIKey, BaseURL: srv.URL + "/v1", Model: "model-test", MaxRetries: retries})
	},
	maxTokens: "length",
	sent:      sentOpenAI,
}, {
	name:  llm.ProviderAnthropic,
	key:   anthropicKey,
	serve: llmtest.NewAnthropic,
	model: func(srv *llmtest.Server, retries int) llm.Model {
		return llm.NewAnthropic(llm.AnthropicOptions{APIKey: anthropicKey, BaseURL: srv.URL, Model: "model-test", MaxRetries: retries})
	},
	maxTokens: "max_tokens",
	sent:      sentAnthropic,
}}

// contractCase is one behaviour. replies script the server (from the
// adapter, where they are in its words); the call then either answers want
// (compared in full, tool call arguments byte for byte) or fails with
// wantErr.
type contractCase struct {
	name string
	// differs says where the adapters differ here by design; empty: nowhere.
	differs string
	replies func(a contractAdapter) []llmtest.Reply
	req     llm.Request // zero: one user message, "Hi"
	// retries is MaxRetries; 0 is the adapters' default (3 retries).
	retries int
	// cancel cancels the call's context once the server has the request,
	// which it then never answers (replies are not used).
	cancel bool
	// deadline makes the call's deadline pass once the server has the
	// request, which it then never answers (replies are not used).
	deadline bool

	want llm.Response
	// check, when set, replaces the comparison with want.
	check   func(t *testing.T, resp llm.Response)
	wantErr *contractError
	// requests is how many requests the server must get; 0 means 1.
	requests int
	// minElapsed is a wait the call must not finish before (a Retry-After).
	minElapsed time.Duration
	// wire checks what the requests carried.
	wire func(t *testing.T, a contractAdapter, sent []sent)

	// streamed runs the case only with streaming (Request.OnText set).
	streamed bool
	// pieces, when set, is the text OnText must get, piece by piece.
	pieces []string
}

type contractError struct {
	status  int    // llm.Error.Status
	message string // in Error(): the provider's message, for the operator
	user    string // in UserMessage()
	is      error  // errors.Is, when set
}

// answeredAfterABrokenAttempt checks an answer "ok" whose first attempt
// began and broke off: the answer's usage (zero in the fake) counts that
// attempt's prompt, estimated (estimate.go).
func answeredAfterABrokenAttempt(t *testing.T, resp llm.Response) {
	t.Helper()
	u := resp.Usage
	if resp.Text != "ok" || resp.StopReason != llm.StopEnd || u.InputTokens <= 0 || u.Estimated != u.InputTokens {
		t.Errorf("response %+v: want \"ok\", the broken attempt's prompt counted as estimated", resp)
	}
}

func replies(r ...llmtest.Reply) func(contractAdapter) []llmtest.Reply {
	return func(contractAdapter) []llmtest.Reply { return r }
}

// A schema as an MCP server may write it: keys in no sorted order, spaces
// and a newline, characters HTML would escape, numbers no float64 holds.
const oddSchema = `{"type": "object",
 "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}, "query": {"type": "string", "description": "a < b && c > d, café"},
 "limit": {"type": "integer", "maximum": 12345678901234567890, "default": 1.50}}, "required": ["query"]}`

// Arguments as a model writes them: unsorted keys, escapes, non-ASCII text,
// a number no float64 holds, a nested object. Compact and without <, >, &,
// so that both fakes send them unchanged.
const oddArguments = `{"zip":"75001","city":"Zürich \"Nord\"\t","n":12345678901234567890,"opts":{"b":[1,2.50,{}],"a":null},"u":"\u00e9"}`

func contractCases() []contractCase {
	return []contractCase{{
		name:    "plain text answer",
		replies: replies(llmtest.Text("Hello, world! Grüße 👋")),
		req:     llm.Request{System: "Be brief.", Messages: []llm.Message{user(text("Hi"))}},
		want:    llm.Response{Text: "Hello, world! Grüße 👋", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			if s[0].System != "Be brief." || !slices.Equal(s[0].Texts, []string{"Hi"}) {
				t.Errorf("sent system %q, texts %q", s[0].System, s[0].Texts)
			}
		},
	}, {
		name:    "empty answer is an end, not an error",
		replies: replies(llmtest.Reply{}),
		want:    llm.Response{StopReason: llm.StopEnd},
	}, {
		name:    "a stream only when OnText is set",
		replies: replies(llmtest.Text("ok")),
		want:    llm.Response{Text: "ok", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			if s[0].Stream != s[0].streamedCall {
				t.Errorf("the request asks for a stream: %v, want %v", s[0].Stream, s[0].streamedCall)
			}
		},
	}, {
		name:     "streamed text arrives piece by piece",
		streamed: true,
		replies:  replies(llmtest.Reply{Chunks: []string{"Hel", "lo, ", "wörld", " 👋"}, ChunkDelay: 5 * time.Millisecond}),
		want:     llm.Response{Text: "Hello, wörld 👋", StopReason: llm.StopEnd},
		pieces:   []string{"Hel", "lo, ", "wörld", " 👋"},
	}, {
		name:     "a stream that breaks off before any text is tried again",
		streamed: true,
		replies:  replies(llmtest.Reply{Text: "lost", Fail: llmtest.FailDrop}, llmtest.Text("ok")),
		check:    answeredAfterABrokenAttempt,
		requests: 2,
	}, {
		name:     "an error event before any text is tried again",
		streamed: true,
		replies:  replies(llmtest.Reply{Text: "lost", Fail: llmtest.FailEvent, FailStatus: 529}, llmtest.Text("ok")),
		check:    answeredAfterABrokenAttempt,
		requests: 2,
	}, {
		name:     "a stream that breaks off after text is an error, not tried again",
		streamed: true,
		replies:  replies(llmtest.Reply{Text: "Hello there world", Fail: llmtest.FailDrop, FailAfter: 2}, llmtest.Text("never")),
		wantErr:  &contractError{status: 502, message: "the stream broke off", user: "having trouble"},
		pieces:   []string{"Hello ", "there "},
	}, {
		name:     "an error event after text keeps its status",
		streamed: true,
		replies:  replies(llmtest.Reply{Text: "Hello there", Fail: llmtest.FailEvent, FailAfter: 1, FailStatus: 529}, llmtest.Text("never")),
		wantErr:  &contractError{status: 529, message: "stream failed", user: "having trouble"},
		pieces:   []string{"Hello "},
	}, {
		name:     "a stream that ends before the answer is complete is an error",
		streamed: true,
		replies:  replies(llmtest.Reply{Text: "Hello there", Fail: llmtest.FailEnd, FailAfter: 1}, llmtest.Text("never")),
		wantErr:  &contractError{status: 502, message: "before the answer was complete", user: "having trouble"},
		pieces:   []string{"Hello "},
	}, {
		name:    "tool call, arguments byte for byte",
		replies: replies(llmtest.ToolCalls(llmtest.Call("call_1", "geo", oddArguments))),
		want: llm.Response{StopReason: llm.StopToolUse,
			ToolCalls: []llm.ToolCall{llmtest.Call("call_1", "geo", oddArguments)}},
	}, {
		name: "tool call arguments go back in the history unchanged",
		differs: "chat completions carries arguments as a string, which goes back byte for byte; Anthropic carries " +
			"them as a JSON value, which its SDK compacts and HTML-escapes (<, >, & as \\u003c…): the same JSON, " +
			"key order and number text kept",
		replies: replies(llmtest.Text("done")),
		req: llm.Request{Messages: []llm.Message{
			user(text("go")),
			assistant(call("call_1", "geo", oddArguments), call("call_2", "geo", `{"q": "a < b",  "z": 1}`)),
			user(result("call_1", "geo", false, text("ok 1")), result("call_2", "geo", false, text("ok 2"))),
		}},
		want: llm.Response{Text: "done", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			calls := s[0].Calls
			if len(calls) != 2 || calls[0].ID != "call_1" || calls[1].ID != "call_2" || calls[0].Name != "geo" {
				t.Fatalf("sent calls %+v", calls)
			}
			if got := string(calls[0].Arguments); got != oddArguments {
				t.Errorf("arguments sent as\n%s\nwant\n%s", got, oddArguments)
			}
			second := string(calls[1].Arguments)
			if a.name == llm.ProviderOpenAI && second != `{"q": "a < b",  "z": 1}` {
				t.Errorf("arguments sent as %s", second)
			}
			assertSameJSON(t, "arguments", calls[1].Arguments, `{"q": "a < b",  "z": 1}`)
		},
	}, {
		name: "parallel tool calls, in order, with text",
		replies: replies(llmtest.Reply{Text: "Checking both.", ToolCalls: []llm.ToolCall{
			llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`),
			llmtest.Call("call_2", "get_weather", `{"city":"Rome"}`),
			llmtest.Call("call_3", "clock", ``),
		}}),
		want: llm.Response{Text: "Checking both.", StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
			llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`),
			llmtest.Call("call_2", "get_weather", `{"city":"Rome"}`),
			llmtest.Call("call_3", "clock", `{}`),
		}},
	}, {
		name:    "tool calls without ids get distinct ones",
		replies: replies(llmtest.ToolCalls(llmtest.Call("", "clock", `{}`), llmtest.Call("", "clock", `{"tz":"UTC"}`))),
		check: func(t *testing.T, resp llm.Response) {
			c := resp.ToolCalls
			if len(c) != 2 || c[0].ID == "" || c[1].ID == "" || c[0].ID == c[1].ID || resp.StopReason != llm.StopToolUse {
				t.Errorf("response %+v, want two calls with distinct ids", resp)
			}
		},
	}, {
		name: "parallel tool results go back in order",
		differs: "chat completions has one tool message per result (then the user's text in a user message); " +
			"Anthropic has all results first in one user message",
		replies: replies(llmtest.Text("Paris is sunny, Rome rainy.")),
		req: llm.Request{Tools: []llm.Tool{weatherTool}, Messages: []llm.Message{
			user(text("Weather in Paris and Rome?")),
			assistant(text("Checking both."), call("call_1", "get_weather", `{"city":"Paris"}`), call("call_2", "get_weather", `{"city":"Rome"}`)),
			user(result("call_1", "get_weather", false, text("sunny")), result("call_2", "get_weather", false, text("rainy")), text("Quickly, please.")),
		}},
		want: llm.Response{Text: "Paris is sunny, Rome rainy.", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			want := []sentResult{{CallID: "call_1", Text: "sunny"}, {CallID: "call_2", Text: "rainy"}}
			assertResults(t, s[0].Results, want)
			if texts := []string{"Weather in Paris and Rome?", "Checking both.", "Quickly, please."}; !slices.Equal(s[0].Texts, texts) {
				t.Errorf("sent texts %q, want %q", s[0].Texts, texts)
			}
		},
	}, {
		name: "tool result with an image in the history",
		differs: "chat completions' tool messages carry text only: the tool message says \"[image attached below]\" " +
			"and the image follows all tool messages in a user message labelled with the call; Anthropic puts the " +
			"image in the tool result",
		replies: replies(llmtest.Text("A cat.")),
		req: llm.Request{Messages: []llm.Message{
			user(text("Screenshot it")),
			assistant(call("call_1", "screenshot", `{}`)),
			user(result("call_1", "screenshot", false, text("page 1"), image(png))),
		}},
		want: llm.Response{Text: "A cat.", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			assertResults(t, s[0].Results, []sentResult{{CallID: "call_1", Text: "page 1", Images: []string{pngBase64}}})
			if len(s[0].Images) != 0 {
				t.Errorf("the image is also sent outside its result: %q", s[0].Images)
			}
		},
	}, {
		name:    "tool error result",
		differs: `chat completions has no error flag: the tool message starts with "ERROR: "; Anthropic sets is_error`,
		replies: replies(llmtest.Text("The tool failed.")),
		req: llm.Request{Messages: []llm.Message{
			user(text("go")),
			assistant(call("call_1", "fetch", `{"url":"http://x"}`)),
			user(result("call_1", "fetch", true, text("connection refused"))),
		}},
		want: llm.Response{Text: "The tool failed.", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			assertResults(t, s[0].Results, []sentResult{{CallID: "call_1", Text: "connection refused", IsError: true}})
		},
	}, {
		name:    "user image",
		replies: replies(llmtest.Text("A cat.")),
		req:     llm.Request{Messages: []llm.Message{user(text("What is this?"), image(png))}},
		want:    llm.Response{Text: "A cat.", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			if !slices.Equal(s[0].Images, []string{pngBase64}) || !slices.Equal(s[0].Texts, []string{"What is this?"}) {
				t.Errorf("sent images %q, texts %q", s[0].Images, s[0].Texts)
			}
		},
	}, {
		name: "schemas verbatim, key order kept",
		differs: "both SDKs compact the schema; Anthropic's also escapes <, >, & (\\u003c…): the same JSON, " +
			"keys in their order, numbers as written. A compact schema without those goes byte for byte",
		replies: replies(llmtest.Text("ok")),
		req:     llm.Request{Tools: []llm.Tool{weatherTool, {Name: "search", Schema: json.RawMessage(oddSchema)}, {Name: "bare"}}, Messages: []llm.Message{user(text("Hi"))}},
		want:    llm.Response{Text: "ok", StopReason: llm.StopEnd},
		wire: func(t *testing.T, a contractAdapter, s []sent) {
			if !slices.Equal(s[0].Tools, []string{"get_weather", "search", "bare"}) {
				t.Errorf("sent tools %q", s[0].Tools)
			}
			if got := string(s[0].Schemas["get_weather"]); got != weatherSchema {
				t.Errorf("schema sent as\n%s\nwant\n%s", got, weatherSchema)
			}
			assertSameJSON(t, "schema", s[0].Schemas["search"], oddSchema)
			assertSameJSON(t, "schema of a tool without one", s[0].Schemas["bare"], `{"type":"object","properties":{}}`)
		},
	}, {
		name: "usage: input counts every prompt token, the cached ones too",
		differs: "chat completions' prompt_tokens includes the cached tokens (cache writes: OpenRouter's " +
			"cache_write_tokens); Anthropic's input_tokens leaves out cache reads and writes, which the adapter adds",
		replies: replies(llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 1200, CacheReadTokens: 1000, CacheWriteTokens: 150, OutputTokens: 30}}),
		want:    llm.Response{Text: "ok", StopReason: llm.StopEnd, Usage: llm.Usage{InputTokens: 1200, CacheReadTokens: 1000, CacheWriteTokens: 150, OutputTokens: 30}},
	}, {
		name: "answer cut at the token limit",
		replies: func(a contractAdapter) []llmtest.Reply {
			return []llmtest.Reply{{Text: "Once upon a", StopReason: a.maxTokens}}
		},
		want: llm.Response{Text: "Once upon a", StopReason: llm.StopMaxTokens},
	}, {
		name: "5xx and 429 are retried, after the wait Retry-After says",
		replies: replies(
			llmtest.Status(500), // the SDK's own backoff, 0.5 s at most
			llmtest.Status(429, "retry-after", "1"),
			llmtest.Text("ok")),
		want:       llm.Response{Text: "ok", StopReason: llm.StopEnd},
		requests:   3,
		minElapsed: time.Second,
	}, {
		name:     "429 after the retries",
		retries:  1,
		replies:  replies(llmtest.Status(429, "retry-after-ms", "1"), llmtest.Reply{Status: 429, Text: "Rate limit reached"}),
		wantErr:  &contractError{status: 429, message: "Rate limit reached", user: "rate-limiting"},
		requests: 2,
	}, {
		name:     "429 with Retry-After and no retries: at once",
		retries:  -1,
		replies:  replies(llmtest.Status(429, "retry-after", "30")),
		wantErr:  &contractError{status: 429, user: "rate-limiting"},
		requests: 1,
	}, {
		name: "401 is not retried, and the key does not leak",
		replies: func(a contractAdapter) []llmtest.Reply {
			return []llmtest.Reply{{Status: 401, Text: "Incorrect API key provided: " + a.key}}
		},
		wantErr: &contractError{status: 401, message: "Incorrect API key provided: [redacted]", user: "API key"},
	}, {
		name:     "500 after the retries",
		retries:  1,
		replies:  replies(llmtest.Status(500, "retry-after-ms", "1"), llmtest.Reply{Status: 500, Text: "The server had an error"}),
		wantErr:  &contractError{status: 500, message: "The server had an error", user: "having trouble"},
		requests: 2,
	}, {
		name:    "400 is not retried",
		replies: replies(llmtest.Reply{Status: 400, Text: "messages: roles must alternate"}),
		wantErr: &contractError{status: 400, message: "messages: roles must alternate", user: "/new"},
	}, {
		name:    "200 with an error body that says 429 is retried",
		differs: `the body is in the provider's shape: OpenRouter's {"error":{"code":429}}, or Anthropic's {"type":"error"} with rate_limit_error`,
		replies: func(a contractAdapter) []llmtest.Reply {
			body := `{"error":{"message":"Rate limited","code":429}}`
			if a.name == llm.ProviderAnthropic {
				body = `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`
			}
			r := llmtest.Raw(200, body)
			r.Header = map[string][]string{"Retry-After-Ms": {"1"}}
			return []llmtest.Reply{r, llmtest.Text("ok")}
		},
		want:     llm.Response{Text: "ok", StopReason: llm.StopEnd},
		requests: 2,
	}, {
		name:    "200 with an error body is an error",
		differs: `OpenRouter's {"error":{"code":404}}, or Anthropic's {"type":"error"} with not_found_error`,
		replies: func(a contractAdapter) []llmtest.Reply {
			body := `{"error":{"message":"No endpoints found for model","code":404}}`
			if a.name == llm.ProviderAnthropic {
				body = `{"type":"error","error":{"type":"not_found_error","message":"No endpoints found for model"}}`
			}
			return []llmtest.Reply{llmtest.Raw(200, body)}
		},
		wantErr: &contractError{status: 404, message: "No endpoints found for model", user: "HTTP 404"},
	}, {
		name:    "200 with a body that is not JSON",
		replies: replies(llmtest.Raw(200, `<html><body>Bad gateway</body></html>`)),
		wantErr: &contractError{status: 502, message: "undecodable response", user: "having trouble"},
	}, {
		name:    "200 with a body that is cut short",
		replies: replies(llmtest.Raw(200, `{"id":"x","choices":[{"message":{"content":"Hel`)),
		wantErr: &contractError{status: 502, message: "undecodable response", user: "having trouble"},
	}, {
		name:    "cancellation returns at once",
		cancel:  true,
		wantErr: &contractError{user: "cancelled", is: context.Canceled},
	}, {
		name:     "deadline",
		deadline: true,
		wantErr:  &contractError{user: "too long", is: context.DeadlineExceeded},
	}, {
		name:    "dropped connection is retried",
		replies: replies(llmtest.Reply{Err: errors.New("drop")}, llmtest.Text("ok")),
		want:    llm.Response{Text: "ok", StopReason: llm.StopEnd},
		// The SDK's backoff, 0.5 s at most.
		requests: 2,
	}, {
		name:     "unreachable after the retries",
		retries:  -1,
		replies:  replies(llmtest.Reply{Err: errors.New("drop")}),
		wantErr:  &contractError{user: "could not be reached"},
		requests: 1,
	}}
}

// TestContract runs every case without streaming; TestContractStreamed
// runs them again with Request.OnText set, with the cases about streams.
func TestContract(t *testing.T) {
	for _, c := range contractCases() {
		if c.streamed {
			continue
		}
		for _, a := range contractAdapters {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				runContract(t, c, a, false)
			})
		}
	}
}

func TestContractStreamed(t *testing.T) {
	for _, c := range contractCases() {
		for _, a := range contractAdapters {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				runContract(t, c, a, true)
			})
		}
	}
}

func runContract(t *testing.T, c contractCase, a contractAdapter, streamed bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	end := cancel
	if c.deadline {
		ctx, end = testkit.DeadlineOnCue(ctx)
	}
	var script []llmtest.Reply
	arrived := make(chan struct{})
	switch {
	case c.cancel || c.deadline:
		script = []llmtest.Reply{llmtest.Func(func(llmtest.Request) llmtest.Reply {
			close(arrived)
			return llmtest.Reply{Text: "never", Delay: time.Hour}
		})}
	case c.replies != nil:
		script = c.replies(a)
	}
	srv := a.serve(t, script...)
	m := a.model(srv, c.retries)
	req := c.req
	if req.Messages == nil {
		req.Messages = []llm.Message{user(text("Hi"))}
	}
	var pieces []string // OnText runs in Complete's goroutine: read after done
	if streamed {
		req.OnText = func(s string) { pieces = append(pieces, s) }
	}

	type result struct {
		resp llm.Response
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		resp, err := m.Complete(ctx, req)
		done <- result{resp, err}
	}()
	if c.cancel || c.deadline {
		<-arrived
		end()
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Complete did not return")
	}
	elapsed := time.Since(start)

	if c.wantErr != nil {
		checkContractError(t, a, r.err, c.wantErr)
	} else if r.err != nil {
		t.Fatalf("error: %v", r.err)
	} else if c.check != nil {
		c.check(t, r.resp)
	} else {
		assertResponse(t, r.resp, c.want)
	}
	if streamed && r.err == nil && strings.Join(pieces, "") != r.resp.Text {
		t.Errorf("OnText got %q, the response's text is %q", pieces, r.resp.Text)
	}
	if c.pieces != nil && !slices.Equal(pieces, c.pieces) {
		t.Errorf("OnText got %q, want %q", pieces, c.pieces)
	}
	if elapsed < c.minElapsed {
		t.Errorf("answered after %v, before the server said to retry (%v)", elapsed, c.minElapsed)
	}

	reqs := srv.Requests()
	want := c.requests
	if want == 0 {
		want = 1
	}
	if len(reqs) != want {
		t.Errorf("%d requests, want %d", len(reqs), want)
	}
	if c.wire != nil && len(reqs) > 0 {
		var s []sent
		for _, r := range reqs {
			one := a.sent(t, r.Body)
			one.streamedCall = streamed
			s = append(s, one)
		}
		c.wire(t, a, s)
	}
}

func checkContractError(t *testing.T, a contractAdapter, err error, want *contractError) {
	t.Helper()
	e := asError(t, err)
	if e.Provider != a.name {
		t.Errorf("provider = %q", e.Provider)
	}
	if e.Status != want.status {
		t.Errorf("status = %d, want %d (%v)", e.Status, want.status, e)
	}
	if want.message != "" && !strings.Contains(e.Error(), want.message) {
		t.Errorf("Error() = %q, want it to contain %q", e.Error(), want.message)
	}
	if !strings.Contains(e.UserMessage(), want.user) {
		t.Errorf("UserMessage() = %q, want it to contain %q", e.UserMessage(), want.user)
	}
	if want.is != nil && !errors.Is(err, want.is) {
		t.Errorf("error %v does not wrap %v", err, want.is)
	}
	for _, s := range []string{e.Error(), e.UserMessage()} {
		if strings.Contains(s, a.key) {
			t.Errorf("the API key leaks: %q", s)
		}
	}
}

func assertResponse(t *testing.T, got, want llm.Response) {
	t.Helper()
	if got.Text != want.Text || got.StopReason != want.StopReason {
		t.Errorf("text %q, stop %q; want %q, %q", got.Text, got.StopReason, want.Text, want.StopReason)
	}
	if got.Usage != want.Usage {
		t.Errorf("usage = %+v, want %+v", got.Usage, want.Usage)
	}
	if len(got.ToolCalls) != len(want.ToolCalls) {
		t.Fatalf("tool calls = %+v, want %+v", got.ToolCalls, want.ToolCalls)
	}
	for i, w := range want.ToolCalls {
		g := got.ToolCalls[i]
		if g.ID != w.ID || g.Name != w.Name || string(g.Arguments) != string(w.Arguments) {
			t.Errorf("call %d = %s %s %s\nwant %s %s %s", i, g.ID, g.Name, g.Arguments, w.ID, w.Name, w.Arguments)
		}
	}
}

func assertResults(t *testing.T, got, want []sentResult) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("sent results %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.CallID != w.CallID || g.Text != w.Text || g.IsError != w.IsError || !slices.Equal(g.Images, w.Images) {
			t.Errorf("sent result %d = %+v, want %+v", i, g, w)
		}
	}
}

// assertSameJSON checks that got and want are the same JSON: the same
// tokens in the same order (object keys included), numbers as written.
func assertSameJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	g, err := jsonTokens(got)
	if err != nil {
		t.Errorf("%s: %s: %v", what, got, err)
		return
	}
	w, err := jsonTokens([]byte(want))
	if err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !slices.Equal(g, w) {
		t.Errorf("%s sent as\n%s\nwant the same JSON as\n%s", what, got, want)
	}
}

func jsonTokens(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%T %v", tok, tok))
	}
}
