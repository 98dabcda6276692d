package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// stream sends a streamed chat-completions request (stream_options asks
// for the usage in the last chunk).
func (m *OpenAI) stream(ctx context.Context, params openai.ChatCompletionNewParams, onText func(string), cost *meter) (Response, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	return streamWithRetries(ctx, m.retries, onText, func(ctx context.Context, emit func(string)) (Response, bool, error) {
		return m.streamOnce(ctx, params, emit, cost)
	})
}

func (m *OpenAI) streamOnce(ctx context.Context, params openai.ChatCompletionNewParams, emit func(string), cost *meter) (Response, bool, error) {
	var res *http.Response
	stream := m.svc.NewStreaming(ctx, params, option.WithResponseInto(&res))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return Response{Usage: cost.stopped(ctx)}, false, newError(ProviderOpenAI, m.o.APIKey, err, res)
	}
	if !isEventStream(res) {
		// The server ignored "stream": the whole completion, at once.
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			return Response{Usage: cost.cut(Usage{}, "")}, true, streamError(ctx, ProviderOpenAI, m.o.APIKey, err)
		}
		resp, err := m.parse(raw)
		if err == nil {
			emit(resp.Text)
		}
		return resp, false, err // as without streaming: an undecodable answer is not retried
	}
	var acc openAIStream
	for stream.Next() {
		if err := acc.add(stream.Current().RawJSON(), emit); err != nil {
			err.Message = scrub(err.Message, m.o.APIKey)
			return Response{Usage: cost.cut(acc.usage, acc.written())}, true, err
		}
	}
	if err := stream.Err(); err != nil {
		return Response{Usage: cost.cut(acc.usage, acc.written())}, true, streamError(ctx, ProviderOpenAI, m.o.APIKey, err)
	}
	if !acc.finished {
		return Response{Usage: cost.cut(acc.usage, acc.written())}, true, streamError(ctx, ProviderOpenAI, m.o.APIKey, errTruncated)
	}
	resp := acc.response()
	if resp.Text == "" && acc.refusal.Len() > 0 {
		resp.Text = acc.refusal.String()
		emit(resp.Text)
	}
	return resp, true, nil
}

// openAIChunk is the part of a chunk the adapter reads, loosely typed for
// OpenAI-compatible servers (arguments as objects, content as parts,
// tool calls without index or id).
type openAIChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   json.RawMessage `json:"content"`
			Refusal   string          `json:"refusal"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
		Error        json.RawMessage `json:"error"`
	} `json:"choices"`
	Usage *openAIUsage `json:"usage"`
}

// openAIStream accumulates a streamed completion. The SDK's accumulator
// merges tool calls that arrive without an index (Ollama, Gemini): calls
// are told apart here by index, else by id, else a delta continues the
// last call.
type openAIStream struct {
	text     strings.Builder
	refusal  strings.Builder
	calls    []*openAIStreamCall
	finish   string
	finished bool
	usage    Usage
}

type openAIStreamCall struct {
	index    int
	hasIndex bool
	id, name string
	args     strings.Builder // the arguments' text, as streamed
	object   json.RawMessage // arguments sent as a JSON object instead
}

func (a *openAIStream) add(raw string, emit func(string)) *Error {
	var c openAIChunk
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return &Error{Provider: ProviderOpenAI, Status: http.StatusBadGateway, Message: "undecodable stream event: " + err.Error(), Err: err}
	}
	if c.Usage != nil {
		a.usage = c.Usage.usage()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			body := []byte(`{"error":` + string(ch.Error) + `}`)
			status, ok := embeddedErrorStatus(body)
			if !ok {
				status = http.StatusBadGateway
			}
			return &Error{Provider: ProviderOpenAI, Status: status, Message: "in the stream: " + errorMessage(body)}
		}
		if t := contentText(ch.Delta.Content); t != "" {
			a.text.WriteString(t)
			emit(t)
		}
		a.refusal.WriteString(ch.Delta.Refusal)
		for _, d := range ch.Delta.ToolCalls {
			call := a.call(d.Index, d.ID)
			if call.name == "" {
				call.name = d.Function.Name
			}
			args := d.Function.Arguments
			var s string
			switch {
			case len(args) == 0 || string(args) == "null":
			case json.Unmarshal(args, &s) == nil:
				call.args.WriteString(s)
			default:
				call.object = args
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish, a.finished = *ch.FinishReason, true
		}
	}
	return nil
}

// call finds the call a tool-call delta continues, or starts one.
func (a *openAIStream) call(index *int, id string) *openAIStreamCall {
	for i := len(a.calls) - 1; i >= 0; i-- {
		c := a.calls[i]
		switch {
		case index != nil && c.hasIndex && c.index == *index && (id == "" || c.id == "" || c.id == id):
			if c.id == "" {
				c.id = id
			}
			return c
		case index == nil && id != "" && c.id == id:
			return c
		}
	}
	if index == nil && id == "" && len(a.calls) > 0 {
		return a.calls[len(a.calls)-1]
	}
	c := &openAIStreamCall{id: id}
	if index != nil {
		c.index, c.hasIndex = *index, true
	}
	a.calls = append(a.calls, c)
	return c
}

// written is what the model wrote so far: text, refusal, tool calls.
func (a *openAIStream) written() string {
	var b strings.Builder
	b.WriteString(a.text.String())
	b.WriteString(a.refusal.String())
	for _, c := range a.calls {
		b.WriteString(c.name)
		b.WriteString(c.args.String())
		b.Write(c.object)
	}
	return b.String()
}

func (a *openAIStream) response() Response {
	resp := Response{Text: a.text.String(), Usage: a.usage}
	for _, c := range a.calls {
		id := c.id
		if id == "" {
			id = newCallID()
		}
		args := c.object
		if args == nil {
			args, _ = json.Marshal(c.args.String())
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: c.name, Arguments: parseArguments(args)})
	}
	resp.StopReason = openAIStopReason(a.finish, len(resp.ToolCalls) > 0)
	return resp
}
