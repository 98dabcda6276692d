package llmtest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A summary request is told by what the model sees — no tools, and
// instructions that ask for a summary — in every form a fake receives:
// Model's request, and both providers' wire through the real adapters. The
// summariser answers from the request's text only.
func TestAsksForSummary(t *testing.T) {
	user := func(s string) []llm.Message {
		return []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}}
	}
	tool := llm.Tool{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object"}`)}
	conversation := "Summarise the conversation below.\n<conversation>\nUser: Remember: my locker code is 4821. Thanks.\nAssistant: noted\n</conversation>"
	tests := []struct {
		name string
		req  llm.Request
		want bool
	}{
		{"system asks", llm.Request{System: "You summarise conversations.", Messages: user("hello")}, true},
		{"user asks", llm.Request{System: "Be brief.", Messages: user(conversation)}, true},
		{"a chat's step offers tools", llm.Request{System: "You summarise conversations.", Messages: user("summarise this page"), Tools: []llm.Tool{tool}}, false},
		{"no tools, no summary", llm.Request{System: "Answer briefly.", Messages: user("what is 2+3?")}, false},
	}
	keep := llmtest.Summariser(func(s string) bool { return strings.Contains(s, "Remember") })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := llmtest.AsksForSummary(llmtest.Request{LLM: tt.req}); got != tt.want {
				t.Errorf("Model: %v, want %v", got, tt.want)
			}
			for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
				var got bool
				var answer string
				f := llmtest.Func(func(r llmtest.Request) llmtest.Reply {
					got = llmtest.AsksForSummary(r)
					reply := keep(r)
					answer = reply.Text
					return reply
				})
				var m llm.Model
				if provider == llm.ProviderOpenAI {
					m = llm.NewOpenAI(llm.OpenAIOptions{BaseURL: llmtest.NewOpenAI(t, f).URL, Model: "m"})
				} else {
					m = llm.NewAnthropic(llm.AnthropicOptions{BaseURL: llmtest.NewAnthropic(t, f).URL, Model: "m"})
				}
				if _, err := m.Complete(context.Background(), tt.req); err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("%s: %v, want %v", provider, got, tt.want)
				}
				if strings.Contains(tt.req.Messages[0].Parts[0].Text, "locker") && answer != "Remember: my locker code is 4821." {
					t.Errorf("%s: summary %q", provider, answer)
				}
			}
		})
	}
}

func TestSentences(t *testing.T) {
	got := llmtest.Sentences("User: Remember: a is 1. And b is 2\nAssistant: noted!\n\n  \nThe tool read returned: x")
	want := []string{"Remember: a is 1.", "And b is 2.", "noted!", "The tool read returned: x."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q, want %q", got, want)
	}
}
