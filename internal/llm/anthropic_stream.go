package llm

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// stream sends a streamed messages request and accumulates its events
// with the SDK's Message.Accumulate.
func (m *Anthropic) stream(ctx context.Context, params anthropic.MessageNewParams, onText func(string), cost *meter) (Response, error) {
	return streamWithRetries(ctx, m.retries, onText, func(ctx context.Context, emit func(string)) (Response, bool, error) {
		return m.streamOnce(ctx, params, emit, cost)
	})
}

func (m *Anthropic) streamOnce(ctx context.Context, params anthropic.MessageNewParams, emit func(string), cost *meter) (Response, bool, error) {
	var res *http.Response
	stream := m.client.Messages.NewStreaming(ctx, params, option.WithResponseInto(&res))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return Response{Usage: cost.stopped(ctx)}, false, newError(ProviderAnthropic, m.o.APIKey, err, res)
	}
	if !isEventStream(res) {
		// The server ignored "stream": the whole message, at once.
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			return Response{Usage: cost.cut(Usage{}, "")}, true, streamError(ctx, ProviderAnthropic, m.o.APIKey, err)
		}
		resp, err := m.parse(raw)
		if err == nil {
			emit(resp.Text)
		}
		return resp, false, err // as without streaming: an undecodable answer is not retried
	}
	var (
		msg     anthropic.Message
		stopped bool
	)
	// What a cut stream cost: the input as message_start said it, the
	// output as streamed.
	cut := func() Response { return Response{Usage: cost.cut(anthropicUsage(msg.Usage), anthropicWritten(msg))} }
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return cut(), true, streamError(ctx, ProviderAnthropic, m.o.APIKey, err)
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				emit(ev.Delta.Text)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return cut(), true, streamError(ctx, ProviderAnthropic, m.o.APIKey, err)
	}
	if !stopped {
		return cut(), true, streamError(ctx, ProviderAnthropic, m.o.APIKey, errTruncated)
	}
	var r anthropicResponse
	r.StopReason = string(msg.StopReason)
	r.Usage.InputTokens = int(msg.Usage.InputTokens)
	r.Usage.OutputTokens = int(msg.Usage.OutputTokens)
	r.Usage.CacheReadInputTokens = int(msg.Usage.CacheReadInputTokens)
	r.Usage.CacheCreationInputTokens = int(msg.Usage.CacheCreationInputTokens)
	for _, b := range msg.Content {
		r.Content = append(r.Content, anthropicBlock{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input})
	}
	return r.response(), true, nil
}

// anthropicUsage is a streamed message's usage so far, in our terms.
func anthropicUsage(u anthropic.Usage) Usage {
	return Usage{
		InputTokens:      int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		OutputTokens:     int(u.OutputTokens),
		CacheReadTokens:  int(u.CacheReadInputTokens),
		CacheWriteTokens: int(u.CacheCreationInputTokens),
	}
}

// anthropicWritten is what the model wrote of msg so far: text,
// reasoning, tool calls.
func anthropicWritten(msg anthropic.Message) string {
	var b strings.Builder
	for _, c := range msg.Content {
		b.WriteString(c.Text)
		b.WriteString(c.Thinking)
		b.WriteString(c.Name)
		b.Write(c.Input)
	}
	return b.String()
}
