package llm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// ProviderOpenAI names the chat-completions adapter in errors.
const ProviderOpenAI = "openai"

// DefaultOpenAIBaseURL is where NewOpenAI sends requests without a BaseURL.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// DefaultMaxRetries is how often a call is retried on 408, 409, 429, 5xx and
// connection errors when the options leave MaxRetries at 0.
const DefaultMaxRetries = 3

// retryCount is how often a call is retried for an option's MaxRetries: 0
// means DefaultMaxRetries, a negative value none.
func retryCount(n int) int {
	switch {
	case n == 0:
		return DefaultMaxRetries
	case n < 0:
		return 0
	}
	return n
}

// OpenAIOptions configures NewOpenAI. The zero value of each field is its
// default.
type OpenAIOptions struct {
	// APIKey is sent as "Authorization: Bearer"; empty sends none (Ollama).
	APIKey string
	// BaseURL is the API root that "chat/completions" is appended to:
	// https://api.openai.com/v1 (default), https://openrouter.ai/api/v1,
	// http://localhost:11434/v1 (Ollama), a vLLM server's /v1.
	BaseURL string
	Model   string
	// MaxTokens caps the answer when a Request does not; 0 sends no cap
	// (the server's default). api.openai.com gets max_completion_tokens,
	// other servers max_tokens.
	MaxTokens int
	// MaxRetries is the number of retries after the first attempt; 0 means
	// DefaultMaxRetries, a negative value none.
	MaxRetries int
	// MaxRetryDelay caps one wait between attempts. 0 keeps the SDK's:
	// backoff from 0.5 s doubling up to 8 s, Retry-After honoured up to
	// 2 minutes. A Retry-After above the cap ends the retries at once.
	MaxRetryDelay time.Duration
	// HTTPClient sends the requests; nil is http.DefaultClient. Bound calls
	// with the context's deadline, not the client's Timeout.
	HTTPClient *http.Client
	// Headers are added to every request (OpenRouter's HTTP-Referer and
	// X-Title, for example).
	Headers map[string]string
	// CountTokens counts the tokens of a text as the model does; it
	// estimates what a request that ended early cost (estimate.go). nil:
	// a Tokenizer of the adapter's own, built on its first use.
	CountTokens func(string) int
}

// OpenAI is the Model of any OpenAI-compatible chat-completions endpoint.
type OpenAI struct {
	o   OpenAIOptions
	svc openai.ChatCompletionService
	// officialAPI is true for api.openai.com, which wants
	// max_completion_tokens where other servers want max_tokens.
	officialAPI bool
	retries     int // after the first attempt
}

var _ Model = (*OpenAI)(nil)

// NewOpenAI returns the chat-completions adapter. It does no I/O and reads no
// environment variable: everything comes from o.
func NewOpenAI(o OpenAIOptions) *OpenAI {
	if o.BaseURL == "" {
		o.BaseURL = DefaultOpenAIBaseURL
	}
	if o.CountTokens == nil {
		o.CountTokens = new(Tokenizer).Count
	}
	retries := retryCount(o.MaxRetries)
	opts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithMaxRetries(retries),
		option.WithMiddleware(embeddedErrors),
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(o.MaxRetryDelay))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	for k, v := range o.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	official := false
	if u, err := url.Parse(o.BaseURL); err == nil {
		official = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	// A service, not openai.NewClient: the client would add OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS from the environment.
	return &OpenAI{o: o, svc: openai.NewChatCompletionService(opts...), officialAPI: official, retries: retries}
}

// Complete sends one chat-completions request: streamed when req.OnText is
// set, else in one piece.
func (m *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := m.params(req)
	if err != nil {
		return Response{}, &Error{Provider: ProviderOpenAI, Message: "build request: " + err.Error(), Err: err}
	}
	cost := newMeter(m.o.CountTokens, &req)
	ctx = cost.watch(ctx)
	if req.OnText != nil {
		return m.stream(ctx, params, req.OnText, cost)
	}
	var (
		raw []byte
		res *http.Response
	)
	// The body is decoded here rather than by the SDK, to accept what
	// OpenAI-compatible servers send (arguments as objects, content as
	// parts, missing ids and finish reasons).
	_, err = m.svc.New(ctx, params, option.WithResponseBodyInto(&raw), option.WithResponseInto(&res))
	if err != nil {
		return Response{Usage: cost.stopped(ctx)}, newError(ProviderOpenAI, m.o.APIKey, err, res)
	}
	return m.parse(raw)
}

func (m *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(cmp.Or(req.Model, m.o.Model)),
		Messages: openAIMessages(req),
	}
	if n := req.MaxTokens; n > 0 || m.o.MaxTokens > 0 {
		if n <= 0 {
			n = m.o.MaxTokens
		}
		if m.officialAPI {
			p.MaxCompletionTokens = openai.Int(int64(n))
		} else {
			p.MaxTokens = openai.Int(int64(n))
		}
	}
	for _, t := range req.Tools {
		def, err := openAIFunction(t)
		if err != nil {
			return p, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}

// openAIFunction builds a function definition whose parameters are the
// tool's schema byte for byte: shared.FunctionParameters is a map, which
// would sort the schema's keys.
func openAIFunction(t Tool) (shared.FunctionDefinitionParam, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, schemaOf(t)})
	if err != nil {
		return shared.FunctionDefinitionParam{}, err
	}
	return param.Override[shared.FunctionDefinitionParam](json.RawMessage(bytes.TrimSpace(buf.Bytes()))), nil
}

// openAIMessages maps the conversation. Tool results become one tool
// message each; the images they hold follow all of them in one user
// message, since tool messages carry text only.
func openAIMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			if a, ok := openAIAssistant(msg); ok {
				out = append(out, a)
			}
		default:
			out = append(out, openAIUser(msg)...)
		}
	}
	return out
}

func openAIAssistant(msg Message) (openai.ChatCompletionMessageParamUnion, bool) {
	var (
		a    openai.ChatCompletionAssistantMessageParam
		text []string
	)
	for _, p := range msg.Parts {
		switch {
		case p.Kind == PartText && p.Text != "":
			text = append(text, p.Text)
		case p.Kind == PartToolCall && p.ToolCall != nil:
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: p.ToolCall.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      p.ToolCall.Name,
						Arguments: openAIArguments(p.ToolCall.Arguments),
					},
				},
			})
		}
	}
	if len(text) > 0 {
		a.Content.OfString = openai.String(strings.Join(text, "\n\n"))
	}
	if len(text) == 0 && len(a.ToolCalls) == 0 {
		return openai.ChatCompletionMessageParamUnion{}, false
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

// openAIArguments is the arguments string sent back for a call. Arguments
// the model wrote as invalid JSON are kept as a JSON string (see
// parseArguments) and go back as that text.
func openAIArguments(args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return "{}"
	}
	var s string
	if args[0] == '"' && json.Unmarshal(args, &s) == nil {
		return s
	}
	return string(args)
}

// errorPrefix starts the text of a failed tool's result, which
// chat completions has no flag for.
const errorPrefix = "ERROR: "

func openAIUser(msg Message) []openai.ChatCompletionMessageParamUnion {
	var (
		out    []openai.ChatCompletionMessageParamUnion
		images []openai.ChatCompletionContentPartUnionParam // of tool results, then the message's own parts
		own    []openai.ChatCompletionContentPartUnionParam
		ownImg bool
	)
	for _, p := range msg.Parts {
		switch p.Kind {
		case PartToolResult:
			if p.ToolResult == nil {
				continue
			}
			text, imgs := openAIToolResult(p.ToolResult)
			out = append(out, openai.ToolMessage(text, p.ToolResult.CallID))
			images = append(images, imgs...)
		case PartText:
			if p.Text != "" {
				own = append(own, openai.TextContentPart(p.Text))
			}
		case PartImage:
			if supportedImage(p.Image) {
				own = append(own, openAIImage(p.Image))
				ownImg = true
			} else {
				own = append(own, openai.TextContentPart(imageNote(p.Image)))
			}
		}
	}
	parts := slices.Concat(images, own)
	switch {
	case len(parts) == 0:
	case len(images) == 0 && !ownImg:
		// Text only: a plain string, which every server takes.
		var text []string
		for _, p := range own {
			text = append(text, p.OfText.Text)
		}
		out = append(out, openai.UserMessage(strings.Join(text, "\n\n")))
	default:
		out = append(out, openai.UserMessage(parts))
	}
	return out
}

// openAIToolResult returns the text of a tool message and the parts of the
// user message that carries the result's images.
func openAIToolResult(r *ToolResult) (string, []openai.ChatCompletionContentPartUnionParam) {
	var (
		text []string
		imgs []openai.ChatCompletionContentPartUnionParam
	)
	for _, p := range r.Content {
		switch p.Kind {
		case PartText:
			text = append(text, p.Text)
		case PartImage:
			if !supportedImage(p.Image) {
				text = append(text, imageNote(p.Image))
				continue
			}
			text = append(text, "[image attached below]")
			imgs = append(imgs, openAIImage(p.Image))
		}
	}
	s := strings.Join(text, "\n")
	if r.IsError {
		s = errorPrefix + s
	} else if strings.TrimSpace(s) == "" {
		s = "(no output)"
	}
	if len(imgs) > 0 {
		label := fmt.Sprintf("Image(s) returned by the tool call %s (%s):", r.CallID, r.Name)
		imgs = append([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(label)}, imgs...)
	}
	return s, imgs
}

func openAIImage(img *Image) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(img)})
}

func dataURL(img *Image) string {
	return "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// openAIResponse is the part of a chat completion the adapter reads,
// loosely typed for OpenAI-compatible servers.
type openAIResponse struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content   json.RawMessage `json:"content"` // a string, null, or parts
			Refusal   string          `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"` // a string, or an object
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Error json.RawMessage `json:"error"` // OpenRouter: a provider failed mid-answer
	} `json:"choices"`
	Usage openAIUsage `json:"usage"`
}

type openAIUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u openAIUsage) usage() Usage {
	return Usage{
		InputTokens:      u.PromptTokens,
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
	}
}

func (m *OpenAI) parse(raw []byte) (Response, error) {
	var r openAIResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, &Error{Provider: ProviderOpenAI, Status: http.StatusBadGateway,
			Message: "undecodable response: " + scrub(err.Error(), m.o.APIKey), Err: err}
	}
	if len(r.Choices) == 0 {
		return Response{}, &Error{Provider: ProviderOpenAI, Status: http.StatusBadGateway, Message: "response without choices"}
	}
	c := r.Choices[0]
	if len(c.Error) > 0 && string(c.Error) != "null" {
		status, ok := embeddedErrorStatus([]byte(`{"error":` + string(c.Error) + `}`))
		if !ok {
			status = http.StatusBadGateway
		}
		return Response{}, &Error{Provider: ProviderOpenAI, Status: status,
			Message: scrub(errorMessage([]byte(`{"error":`+string(c.Error)+`}`)), m.o.APIKey)}
	}
	resp := Response{Text: contentText(c.Message.Content), Usage: r.Usage.usage()}
	if resp.Text == "" {
		resp.Text = c.Message.Refusal
	}
	for _, tc := range c.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = newCallID()
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: parseArguments(tc.Function.Arguments)})
	}
	resp.StopReason = openAIStopReason(c.FinishReason, len(resp.ToolCalls) > 0)
	return resp, nil
}

// openAIStopReason normalises finish_reason. Servers that answer tool calls
// with "stop" (Ollama) or with none still mean tool use.
func openAIStopReason(finish string, toolCalls bool) string {
	switch {
	case finish == "length":
		return StopMaxTokens
	case toolCalls:
		return StopToolUse
	case finish == "stop" || finish == "" || finish == "eos" || finish == "end_turn":
		return StopEnd
	case finish == "tool_calls" || finish == "function_call":
		return StopToolUse // without calls: the caller sees no call to run
	}
	return finish
}

// contentText reads a message's content: a string, null, or an array of
// parts of which the text ones count.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// parseArguments turns the arguments of a call into valid JSON: the string
// OpenAI sends is unwrapped, an object (Ollama) is kept, nothing is {}, and
// text that is not JSON is kept as a JSON string so the tool call fails
// with a clear error instead of the transcript breaking.
func parseArguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	if raw[0] != '"' {
		if json.Valid(raw) {
			return raw
		}
		b, _ := json.Marshal(string(raw))
		return b
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return json.RawMessage(`{}`)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// newCallID names a tool call the server left without an id.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
