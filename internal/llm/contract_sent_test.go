package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Reading a request back: sent puts what a request body carried in the same
// terms for both adapters (contractAdapter.sent), so that a contract case
// can compare what they sent.

// sent is what one request carried, in the same terms for both adapters.
type sent struct {
	System  string
	Stream  bool
	Texts   []string                   // the text parts of user and assistant messages, in order
	Images  []string                   // base64 data of the images in user messages, outside tool results
	Calls   []llm.ToolCall             // tool calls in the history; Arguments as on the wire
	Results []sentResult               // tool results in the history, in order
	Schemas map[string]json.RawMessage // tool name → its schema as on the wire
	Tools   []string                   // tool names, in order

	streamedCall bool // the call had OnText set
}

type sentResult struct {
	CallID  string
	Text    string
	IsError bool
	Images  []string // base64 data
}

// sentOpenAI reads a chat-completions request. Tool results are tool
// messages; the "ERROR: " prefix is the error flag; the images of tool
// results come in a user message after them, labelled with the call id;
// "[image attached below]" stands where they were.
func sentOpenAI(t *testing.T, body []byte) sent {
	t.Helper()
	var b struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("request body: %v", err)
	}
	s := sent{Stream: b.Stream, Schemas: map[string]json.RawMessage{}}
	byID := map[string]int{}
	for _, m := range b.Messages {
		var str string
		isString := json.Unmarshal(m.Content, &str) == nil
		switch m.Role {
		case "system":
			s.System = str
		case "tool":
			r := sentResult{CallID: m.ToolCallID}
			str, r.IsError = strings.CutPrefix(str, "ERROR: ")
			var lines []string
			for l := range strings.SplitSeq(str, "\n") {
				if l != "[image attached below]" {
					lines = append(lines, l)
				}
			}
			r.Text = strings.Join(lines, "\n")
			byID[r.CallID] = len(s.Results)
			s.Results = append(s.Results, r)
		case "assistant":
			if isString && str != "" {
				s.Texts = append(s.Texts, str)
			}
			for _, c := range m.ToolCalls {
				s.Calls = append(s.Calls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
			}
		case "user":
			if isString {
				s.Texts = append(s.Texts, str)
				continue
			}
			var parts []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				t.Fatalf("user content %s: %v", m.Content, err)
			}
			owner := -1 // the tool result the images belong to
			for _, p := range parts {
				switch p.Type {
				case "text":
					if rest, ok := strings.CutPrefix(p.Text, "Image(s) returned by the tool call "); ok {
						id, _, _ := strings.Cut(rest, " ")
						i, ok := byID[id]
						if !ok {
							t.Errorf("images labelled with an unknown call: %q", p.Text)
						}
						owner = i
						continue
					}
					owner = -1
					s.Texts = append(s.Texts, p.Text)
				case "image_url":
					data := p.ImageURL.URL[strings.Index(p.ImageURL.URL, ",")+1:]
					if owner >= 0 {
						s.Results[owner].Images = append(s.Results[owner].Images, data)
					} else {
						s.Images = append(s.Images, data)
					}
				}
			}
		}
	}
	for _, tool := range b.Tools {
		s.Tools = append(s.Tools, tool.Function.Name)
		s.Schemas[tool.Function.Name] = tool.Function.Parameters
	}
	return s
}

// sentAnthropic reads a messages request.
func sentAnthropic(t *testing.T, body []byte) sent {
	t.Helper()
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Source    struct {
			Data string `json:"data"`
		} `json:"source"`
		Content []struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Source struct {
				Data string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	}
	var b struct {
		Stream bool `json:"stream"`
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("request body: %v", err)
	}
	s := sent{Stream: b.Stream, Schemas: map[string]json.RawMessage{}}
	for _, sys := range b.System {
		s.System += sys.Text
	}
	for _, m := range b.Messages {
		for _, p := range m.Content {
			switch p.Type {
			case "text":
				s.Texts = append(s.Texts, p.Text)
			case "image":
				s.Images = append(s.Images, p.Source.Data)
			case "tool_use":
				s.Calls = append(s.Calls, llm.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Input})
			case "tool_result":
				r := sentResult{CallID: p.ToolUseID, IsError: p.IsError}
				var text []string
				for _, c := range p.Content {
					switch c.Type {
					case "text":
						text = append(text, c.Text)
					case "image":
						r.Images = append(r.Images, c.Source.Data)
					}
				}
				r.Text = strings.Join(text, "\n")
				s.Results = append(s.Results, r)
			}
		}
	}
	for _, tool := range b.Tools {
		s.Tools = append(s.Tools, tool.Name)
		s.Schemas[tool.Name] = tool.InputSchema
	}
	return s
}
