package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// maxSamplingMessages bounds a sampling request, which costs the chat's
// tokens.
const maxSamplingMessages = 100

// parseSampling reads the params of a sampling/createMessage.
func parseSampling(server string, raw json.RawMessage) (chat.SamplingRequest, error) {
	var p struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		SystemPrompt     string   `json:"systemPrompt"`
		MaxTokens        int      `json:"maxTokens"`
		Temperature      *float64 `json:"temperature"`
		StopSequences    []string `json:"stopSequences"`
		Tools            []any    `json:"tools"`
		ModelPreferences struct {
			Hints []struct {
				Name string `json:"name"`
			} `json:"hints"`
		} `json:"modelPreferences"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return chat.SamplingRequest{}, fmt.Errorf("invalid params: %w", err)
	}
	if len(p.Tools) > 0 {
		return chat.SamplingRequest{}, errors.New("tools in sampling are not supported by this client (it declares no sampling.tools)")
	}
	if len(p.Messages) == 0 {
		return chat.SamplingRequest{}, errors.New("messages must not be empty")
	}
	if len(p.Messages) > maxSamplingMessages {
		return chat.SamplingRequest{}, fmt.Errorf("more than %d messages", maxSamplingMessages)
	}
	r := chat.SamplingRequest{Server: server, SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens,
		Temperature: p.Temperature, Stop: p.StopSequences}
	for _, h := range p.ModelPreferences.Hints {
		if h.Name != "" {
			r.ModelHints = append(r.ModelHints, h.Name)
		}
	}
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return chat.SamplingRequest{}, fmt.Errorf("message %d: role %q is neither user nor assistant", i, m.Role)
		}
		content, err := samplingContent(m.Content)
		if err != nil {
			return chat.SamplingRequest{}, fmt.Errorf("message %d: %w", i, err)
		}
		r.Messages = append(r.Messages, chat.SamplingMessage{Role: m.Role, Content: content})
	}
	return r, nil
}

// samplingContent reads one content block or an array of them: text and
// images; audio and tool blocks are refused.
func samplingContent(raw json.RawMessage) ([]chat.Part, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	var blocks []json.RawMessage
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return nil, err
		}
	} else {
		blocks = []json.RawMessage{raw}
	}
	var out []chat.Part
	for _, b := range blocks {
		var c struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, err
		}
		switch c.Type {
		case "text":
			out = append(out, chat.Part{Kind: chat.TextPart, Text: c.Text})
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return nil, fmt.Errorf("image: %w", err)
			}
			out = append(out, chat.Part{Kind: chat.ImagePart, Data: data, MIMEType: c.MIMEType})
		default:
			return nil, fmt.Errorf("content of type %q is not supported in sampling", c.Type)
		}
	}
	return out, nil
}

// samplingResult is the createMessage result of r.
func samplingResult(r chat.SamplingResult) json.RawMessage {
	stop := r.StopReason
	if stop == "" {
		stop = "endTurn"
	}
	b, _ := json.Marshal(map[string]any{
		"role":       "assistant",
		"content":    map[string]string{"type": "text", "text": r.Text},
		"model":      r.Model,
		"stopReason": stop,
	})
	return b
}
