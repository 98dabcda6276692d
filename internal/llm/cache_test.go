package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// Tools loaded on demand (tool search) come after the stable ones: the
// request bodies of both providers keep the stable part byte for byte, the
// Anthropic adapter marks it for the cache apart from the last tool, and
// both read the cache fields of the answer.
func TestLoadedToolsKeepTheStablePrefix(t *testing.T) {
	loaded := llm.Tool{Name: "browser_tabs", Description: "List, create, close or select a tab",
		Schema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"}},"required":["action"]}`)}
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			usage := llm.Usage{InputTokens: 5000, CacheReadTokens: 4000, CacheWriteTokens: 600, OutputTokens: 20}
			var srv *llmtest.Server
			var m llm.Model
			if provider == llm.ProviderOpenAI {
				srv = llmtest.NewOpenAI(t, llmtest.Reply{Text: "a", Usage: usage}, llmtest.Reply{Text: "b", Usage: usage})
				m = newOpenAI(srv)
			} else {
				srv = llmtest.NewAnthropic(t, llmtest.Reply{Text: "a", Usage: usage}, llmtest.Reply{Text: "b", Usage: usage})
				m = newAnthropic(srv)
			}
			stable := []llm.Tool{weatherTool, clockTool}
			req := llm.Request{System: "sys", Tools: stable, StableTools: 2, Messages: []llm.Message{user(text("hi"))}}
			for i, tools := range [][]llm.Tool{stable, append(append([]llm.Tool{}, stable...), loaded)} {
				req.Tools = tools
				resp, err := m.Complete(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Usage != usage {
					t.Errorf("request %d: usage %+v, want %+v", i, resp.Usage, usage)
				}
			}
			reqs := srv.Requests()
			var lists [2][]json.RawMessage
			for i, r := range reqs {
				var body struct {
					Tools []json.RawMessage `json:"tools"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				lists[i] = body.Tools
			}
			if len(lists[0]) != 2 || len(lists[1]) != 3 {
				t.Fatalf("tool lists of %d and %d tools", len(lists[0]), len(lists[1]))
			}
			for i := range 2 {
				if string(lists[0][i]) != string(lists[1][i]) {
					t.Errorf("stable tool %d changed:\n%s\n%s", i, lists[0][i], lists[1][i])
				}
			}
			if provider != llm.ProviderAnthropic {
				return
			}
			cached := func(raw json.RawMessage) bool {
				var tool struct {
					CacheControl *struct{ Type string } `json:"cache_control"`
				}
				_ = json.Unmarshal(raw, &tool)
				return tool.CacheControl != nil && tool.CacheControl.Type == "ephemeral"
			}
			want := [][]bool{{false, true}, {false, true, true}}
			for i, list := range lists {
				for j, raw := range list {
					if cached(raw) != want[i][j] {
						t.Errorf("request %d, tool %d: cache_control %v, want %v", i, j, cached(raw), want[i][j])
					}
				}
			}
		})
	}
}
