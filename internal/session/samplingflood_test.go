package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/spend"
)

// A server with "sampling": true that sends 50 sampling requests at once,
// against a daily allowance of 5,000 tokens where each request costs
// 2,040: the chat spends at most the allowance plus one request, and the
// model has at most two of the chat's requests at a time. (Before, every
// request was checked against what was spent before any of them was
// counted: 43–50 at the model together, 100,000 tokens and more spent.)
func TestSamplingFloodHoldsTheAllowance(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			const (
				count     = 50
				perChat   = 5000
				maxTokens = 2000
				cost      = 40 + maxTokens // what each sampling request costs
				limit     = 2              // requests of one chat at the model at once
			)
			var (
				mu                    sync.Mutex
				inFlight, most, asked int
				allIn                 bool
				all                   = make(chan struct{}) // closed once all of them are at the model
			)
			answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
				step := llm.Usage{InputTokens: 100, OutputTokens: 10}
				switch {
				case req.System == "Answer briefly.":
					mu.Lock()
					inFlight++
					asked++
					most = max(most, inFlight)
					if inFlight == count && !allIn {
						allIn = true
						close(all)
					}
					mu.Unlock()
					// The request is held until all of them are at the
					// model (what must not happen), or for a moment: long
					// enough for requests let through together to meet
					// here. What is checked below holds however long.
					select {
					case <-all:
					case <-time.After(50 * time.Millisecond):
					case <-ctx.Done():
					}
					mu.Lock()
					inFlight--
					mu.Unlock()
					return llm.Response{Text: "ok", Usage: llm.Usage{InputTokens: 40, OutputTokens: maxTokens}}, nil
				case len(llmtest.LastToolResults(req)) > 0:
					return llm.Response{Text: "done", Usage: step}, nil
				}
				resp := toolCall("1", fakemcp.ToolSampleMany, fmt.Sprintf(`{"prompt":"?","count":%d,"maxTokens":%d}`, count, maxTokens))
				resp.Usage = step
				return resp, nil
			}
			day := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			ledger := spend.New(spend.Options{Dir: filepath.Join(t.TempDir(), "usage"), PerChat: perChat, Now: func() time.Time { return day }})
			if err := ledger.Load(); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeAsk}, sampling: true, allowance: ledger,
				server: func(c *mcpconfig.ServerConfig) { c.ProtocolVersion = protocol }})
			e.deliver(chat.In(40), "fan out")
			texts := e.chat.waitTexts(t, chat.In(40), 1)
			e.close()
			spent := ledger.Stats().Tokens()
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%d tokens spent against %d; %d sampling requests reached the model, at most %d at once; the chat read %q",
				spent, perChat, asked, most, texts)
			if spent > perChat+cost {
				t.Errorf("%d tokens spent: more than the allowance (%d) and one request (%d)", spent, perChat, cost)
			}
			if most > limit {
				t.Errorf("%d of the chat's requests at the model at once, want at most %d", most, limit)
			}
			if asked < 2 {
				t.Errorf("%d sampling requests answered: the allowance had room for two", asked)
			}
		})
	}
}
