package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/spend"
)

// /stop during a streamed answer, five times, through each real adapter:
// the provider took every request, so each counts — its prompt and what
// was streamed, estimated — in the chat's usage and against its
// allowance. (Before: five requests, 0 tokens counted.)
func TestStoppedAnswersAreCounted(t *testing.T) {
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			story := make([]string, 300)
			for i := range story {
				story[i] = fmt.Sprintf("word%d ", i)
			}
			reply := llmtest.Reply{Chunks: story, ChunkDelay: 50 * time.Millisecond, Usage: llm.Usage{InputTokens: 1500, OutputTokens: 900}}
			var model llm.Model
			if provider == llm.ProviderOpenAI {
				srv := llmtest.NewOpenAI(t)
				model = llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, Model: "m"})
				srv.Push(reply, reply, reply, reply, reply)
			} else {
				srv := llmtest.NewAnthropic(t)
				model = llm.NewAnthropic(llm.AnthropicOptions{BaseURL: srv.URL, Model: "m"})
				srv.Push(reply, reply, reply, reply, reply)
			}
			day := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			ledger := spend.New(spend.Options{Dir: filepath.Join(t.TempDir(), "usage"), PerChat: 1_000_000, Now: func() time.Time { return day }})
			if err := ledger.Load(); err != nil {
				t.Fatal(err)
			}
			shown := make(chan struct{}, 1) // the answer has shown three pieces
			answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
				onText, n := req.OnText, 0
				req.OnText = func(s string) {
					onText(s)
					if n++; n == 3 {
						shown <- struct{}{}
					}
				}
				return model.Complete(ctx, req)
			}
			e := newEnv(t, answer, envOptions{streams: &streamLog{}, allowance: ledger})
			const stops = 5
			for i := 1; i <= stops; i++ {
				e.deliver(chat.In(40), "tell me a story")
				select {
				case <-shown:
				case <-time.After(20 * time.Second):
					t.Fatalf("answer %d never streamed", i)
				}
				e.manager.Stop(chat.In(40))
				if texts := e.chat.waitTexts(t, chat.In(40), i); texts[i-1] != "Stopped." {
					t.Fatalf("texts %q, want Stopped.", texts)
				}
			}
			e.close()
			st := ledger.Stats()
			report := ledger.Report(40, 0, false)
			t.Logf("%d stops: %+v\n%s", stops, st.Counts, report)
			if st.Calls != stops || st.Input <= 0 || st.Output < 3*stops || st.Estimated <= 0 {
				t.Errorf("counted %+v: want %d calls, each with its prompt and at least three pieces", st.Counts, stops)
			}
			if provider == llm.ProviderAnthropic && st.Input != stops*1500 {
				t.Errorf("input %d, want %d: message_start says what each prompt was", st.Input, stops*1500)
			}
			if !strings.Contains(report, fmt.Sprintf("in %d model calls", stops)) || !strings.Contains(report, "estimated") ||
				strings.Contains(report, "1,000,000 left today") {
				t.Errorf("/usage says:\n%s\nwant %d calls, estimated, taken from the allowance", report, stops)
			}
		})
	}
}
