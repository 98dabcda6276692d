package llm_test

import (
	"context"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A request's Model is the model asked, else the adapter's own: a chat's
// pick of LLM_MODELS on the endpoint every chat shares.
func TestRequestModel(t *testing.T) {
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			var srv *llmtest.Server
			var m llm.Model
			if provider == llm.ProviderOpenAI {
				srv = llmtest.NewOpenAI(t, llmtest.Text("a"), llmtest.Text("b"))
				m = llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, Model: "default-model", MaxRetries: -1})
			} else {
				srv = llmtest.NewAnthropic(t, llmtest.Text("a"), llmtest.Text("b"))
				m = llm.NewAnthropic(llm.AnthropicOptions{BaseURL: srv.URL, Model: "default-model", MaxRetries: -1})
			}
			for _, model := range []string{"", "picked-model"} {
				if _, err := m.Complete(context.Background(), llm.Request{Model: model, Messages: []llm.Message{user(text("hi"))}}); err != nil {
					t.Fatal(err)
				}
			}
			got := llmtest.Models(srv.Requests())
			if len(got) != 2 || got[0] != "default-model" || got[1] != "picked-model" {
				t.Errorf("models sent = %q, want [default-model picked-model]", got)
			}
		})
	}
}
