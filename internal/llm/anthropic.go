package llm

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// ProviderAnthropic names the messages adapter in errors.
const ProviderAnthropic = "anthropic"

// Defaults of AnthropicOptions.
const (
	DefaultAnthropicBaseURL   = "https://api.anthropic.com"
	DefaultAnthropicVersion   = "2023-06-01"
	DefaultAnthropicMaxTokens = 8192
)

// AuthHeader values of AnthropicOptions.
const (
	AuthXAPIKey = "x-api-key"
	AuthBearer  = "bearer"
)

// AnthropicOptions configures NewAnthropic. The zero value of each field is
// its default.
type AnthropicOptions struct {
	APIKey string
	// BaseURL is the API root, without v1/messages, which the SDK adds:
	// https://api.anthropic.com (default).
	BaseURL string
	Model   string
	// MaxTokens caps the answer when a Request does not; 0 means
	// DefaultAnthropicMaxTokens (the API requires a cap).
	MaxTokens int
	// MaxRetries is the number of retries after the first attempt on 408,
	// 409, 429, 5xx and connection errors; 0 means DefaultMaxRetries, a
	// negative value none. The SDK waits what retry-after-ms or Retry-After
	// says, else backs off from 0.5 s doubling up to 8 s; the context's
	// deadline bounds it all.
	MaxRetries int
	// AuthHeader is how the key is sent: AuthXAPIKey ("x-api-key", the
	// default, which Anthropic and compatible servers take) or AuthBearer
	// ("Authorization: Bearer").
	AuthHeader string
	// Version is the anthropic-version header; default DefaultAnthropicVersion.
	Version string
	// HTTPClient sends the requests; nil is http.DefaultClient. Bound calls
	// with the context's deadline, not the client's Timeout.
	HTTPClient *http.Client
	// CountTokens counts the tokens of a text as the model does; it
	// estimates what a request that ended early cost (estimate.go). nil:
	// a Tokenizer of the adapter's own, built on its first use.
	CountTokens func(string) int
}

// Anthropic is the Model of the Anthropic messages API and compatible ones.
type Anthropic struct {
	o       AnthropicOptions
	client  anthropic.Client
	retries int // after the first attempt
}

var _ Model = (*Anthropic)(nil)

// NewAnthropic returns the messages adapter. It does no I/O and reads no
// environment variable, profile or config file: everything comes from o.
func NewAnthropic(o AnthropicOptions) *Anthropic {
	if o.BaseURL == "" {
		o.BaseURL = DefaultAnthropicBaseURL
	}
	if o.Version == "" {
		o.Version = DefaultAnthropicVersion
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultAnthropicMaxTokens
	}
	if o.CountTokens == nil {
		o.CountTokens = new(Tokenizer).Count
	}
	retries := retryCount(o.MaxRetries)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithBaseURL(o.BaseURL),
		option.WithMaxRetries(retries),
		option.WithHeader("anthropic-version", o.Version),
		option.WithMiddleware(embeddedErrors),
	}
	if o.APIKey != "" {
		if strings.EqualFold(o.AuthHeader, AuthBearer) {
			opts = append(opts, option.WithAPIKey(o.APIKey)) // v2 sends it as a bearer token
		} else {
			opts = append(opts, option.WithHeader("x-api-key", o.APIKey))
		}
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Anthropic{o: o, client: anthropic.NewClient(opts...), retries: retries}
}

// Complete sends one messages request: streamed when req.OnText is set,
// else in one piece.
func (m *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	params := m.params(req)
	cost := newMeter(m.o.CountTokens, &req)
	ctx = cost.watch(ctx)
	if req.OnText != nil {
		return m.stream(ctx, params, req.OnText, cost)
	}
	var (
		raw []byte
		res *http.Response
	)
	// Post, not Messages.New: New refuses a max_tokens above about 21k
	// without streaming and adds a 10-minute timeout per attempt; here the
	// caller's context bounds the call. The body is decoded here, to accept
	// what Anthropic-compatible servers send.
	err := m.client.Post(ctx, "v1/messages", params, &raw, option.WithResponseInto(&res))
	if err != nil {
		return Response{Usage: cost.stopped(ctx)}, newError(ProviderAnthropic, m.o.APIKey, err, res)
	}
	return m.parse(raw)
}

func (m *Anthropic) params(req Request) anthropic.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.o.MaxTokens
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(cmp.Or(req.Model, m.o.Model)),
		MaxTokens: int64(maxTokens),
		Messages:  anthropicMessages(req.Messages),
	}
	// Prompt caching: a breakpoint on the last system block and on the last
	// tool caches the tools and the system prompt (the cache covers
	// tools, then system, then messages); one on the last block of the
	// conversation caches the history, so each step of an agent turn reads
	// the steps before it from the cache. When tools after the stable ones
	// were loaded on demand, one more on the last stable tool keeps that
	// prefix cached when the loaded ones change (four breakpoints at most,
	// as the API allows).
	if n := len(p.Messages); n > 0 {
		var blocks []anthropic.ContentBlockParamUnion
		switch last := p.Messages[n-1]; {
		case last.OfUser != nil:
			blocks = last.OfUser.Content
		case last.OfAssistant != nil:
			blocks = last.OfAssistant.Content
		}
		if len(blocks) > 0 {
			if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
				*cc = anthropic.NewCacheControlEphemeralParam()
			}
		}
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for i, t := range req.Tools {
		tp := anthropic.ToolParam{
			Name: t.Name,
			// Verbatim: the SDK's schema type would reorder and drop keys.
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](schemaOf(t)),
		}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		if i == len(req.Tools)-1 || i == req.StableTools-1 {
			tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	return p
}

func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, msg := range msgs {
		var results, blocks []anthropic.ContentBlockParamUnion
		for _, p := range msg.Parts {
			switch p.Kind {
			case PartText:
				if p.Text != "" {
					blocks = append(blocks, anthropic.NewTextBlock(p.Text))
				}
			case PartImage:
				if msg.Role == RoleAssistant {
					continue
				}
				if supportedImage(p.Image) {
					blocks = append(blocks, anthropic.NewImageBlockBase64(p.Image.MIMEType, base64.StdEncoding.EncodeToString(p.Image.Data)))
				} else {
					blocks = append(blocks, anthropic.NewTextBlock(imageNote(p.Image)))
				}
			case PartToolCall:
				if p.ToolCall == nil {
					continue
				}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
					ID:    p.ToolCall.ID,
					Name:  p.ToolCall.Name,
					Input: toolArguments(p.ToolCall.Arguments),
				}})
			case PartToolResult:
				if p.ToolResult != nil {
					results = append(results, anthropic.ContentBlockParamUnion{OfToolResult: anthropicToolResult(p.ToolResult)})
				}
			}
		}
		// The API wants the tool results first in their message.
		blocks = append(results, blocks...)
		if len(blocks) == 0 {
			continue
		}
		if msg.Role == RoleAssistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out
}

func anthropicToolResult(r *ToolResult) *anthropic.ToolResultBlockParam {
	b := &anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	for _, p := range r.Content {
		switch p.Kind {
		case PartText:
			if p.Text != "" {
				b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
			}
		case PartImage:
			if !supportedImage(p.Image) {
				b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: imageNote(p.Image)}})
				continue
			}
			b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(p.Image.Data),
					MediaType: anthropic.Base64ImageSourceMediaType(p.Image.MIMEType),
				}},
			}})
		}
	}
	return b
}

// anthropicResponse is the part of a message the adapter reads.
type anthropicResponse struct {
	Type       string           `json:"type"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func (m *Anthropic) parse(raw []byte) (Response, error) {
	var r anthropicResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, &Error{Provider: ProviderAnthropic, Status: http.StatusBadGateway,
			Message: "undecodable response: " + scrub(err.Error(), m.o.APIKey), Err: err}
	}
	return r.response(), nil
}

func (r *anthropicResponse) response() Response {
	// input_tokens leaves out the tokens read from and written to the
	// cache; Usage.InputTokens counts them, as chat completions does.
	resp := Response{Usage: Usage{
		InputTokens:      r.Usage.InputTokens + r.Usage.CacheReadInputTokens + r.Usage.CacheCreationInputTokens,
		OutputTokens:     r.Usage.OutputTokens,
		CacheReadTokens:  r.Usage.CacheReadInputTokens,
		CacheWriteTokens: r.Usage.CacheCreationInputTokens,
	}}
	var text []string
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			id := b.ID
			if id == "" {
				id = newCallID()
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: b.Name, Arguments: parseArguments(b.Input)})
		}
	}
	resp.Text = strings.Join(text, "")
	resp.StopReason = anthropicStopReason(r.StopReason, len(resp.ToolCalls) > 0)
	return resp
}

func anthropicStopReason(reason string, toolCalls bool) string {
	switch reason {
	case "max_tokens", "model_context_window_exceeded":
		return StopMaxTokens
	case "tool_use":
		return StopToolUse
	case "end_turn", "stop_sequence", "":
		if toolCalls {
			return StopToolUse
		}
		return StopEnd
	}
	return reason
}
