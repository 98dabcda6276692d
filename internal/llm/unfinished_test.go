package llm_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A request that ends early — stopped, timed out, its stream broken off —
// was taken by the provider, who bills it: the failed call's Response
// still carries its Usage, an estimate of the prompt and of what was
// streamed. A request the provider refused or never got costs nothing.
func TestUnfinishedRequestsCount(t *testing.T) {
	story := make([]string, 40)
	for i := range story {
		story[i] = fmt.Sprintf("word%d ", i)
	}
	usage := llm.Usage{InputTokens: 1200, OutputTokens: 400}
	slow := llmtest.Reply{Chunks: story, ChunkDelay: 20 * time.Millisecond, Usage: usage}
	broken := func(f llmtest.StreamFailure) llmtest.Reply {
		return llmtest.Reply{Chunks: story, Fail: f, FailAfter: 3, FailStatus: 529, Usage: usage}
	}
	cases := []struct {
		name     string
		streamed bool
		reply    llmtest.Reply
		// stopAfter cancels the call once OnText got that many pieces.
		stopAfter int
		// stopOnArrival cancels the call once the server has the request,
		// which it then never answers; timeOnArrival makes its deadline
		// pass then.
		stopOnArrival, timeOnArrival bool
		retries                      int
		unreachable                  bool // the adapter points at a closed port
		// billed: the call counts its prompt; streamed: and the text that
		// reached OnText.
		billed, streamedText bool
	}{
		{name: "stopped mid-stream", streamed: true, reply: slow, stopAfter: 3, billed: true, streamedText: true},
		{name: "stream broken off after text", streamed: true, reply: broken(llmtest.FailDrop), billed: true, streamedText: true},
		{name: "stream ended before the answer was complete", streamed: true, reply: broken(llmtest.FailEnd), billed: true, streamedText: true},
		{name: "error event after text", streamed: true, reply: broken(llmtest.FailEvent), billed: true, streamedText: true},
		{name: "stopped before the stream began", streamed: true, stopOnArrival: true, billed: true},
		{name: "stopped while the model writes, not streamed", stopOnArrival: true, billed: true},
		{name: "timed out, not streamed", timeOnArrival: true, billed: true},
		{name: "refused with 429", streamed: true, retries: -1, reply: llmtest.Status(429)},
		{name: "refused with 400", reply: llmtest.Reply{Status: 400, Text: "bad request"}},
		{name: "unreachable", streamed: true, retries: -1, unreachable: true},
	}
	for _, c := range cases {
		for _, a := range contractAdapters {
			t.Run(c.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				end := cancel
				if c.timeOnArrival {
					ctx, end = testkit.DeadlineOnCue(ctx)
				}
				reply := c.reply
				arrived := make(chan struct{})
				if c.stopOnArrival || c.timeOnArrival {
					reply = llmtest.Func(func(llmtest.Request) llmtest.Reply {
						close(arrived)
						return llmtest.Reply{Text: "never", Delay: time.Hour}
					})
				}
				srv := a.serve(t, reply)
				if c.unreachable {
					closed := httptest.NewServer(nil)
					closed.Close()
					srv = &llmtest.Server{URL: closed.URL}
				}
				m := a.model(srv, c.retries)
				req := llm.Request{System: "Tell long stories.", Tools: []llm.Tool{weatherTool},
					Messages: []llm.Message{user(text("Tell me the story of the fox and the crow, at length."))}}
				pieces := 0
				if c.streamed {
					req.OnText = func(string) {
						if pieces++; pieces == c.stopAfter {
							cancel()
						}
					}
				}
				if c.stopOnArrival || c.timeOnArrival {
					go func() {
						<-arrived
						end()
					}()
				}
				resp, err := m.Complete(ctx, req)
				if err == nil {
					t.Fatalf("the call answered %+v", resp)
				}
				u := resp.Usage
				t.Logf("%v: usage %+v", err, u)
				if !c.billed {
					if u != (llm.Usage{}) {
						t.Errorf("usage %+v, want none: the provider did not take the request", u)
					}
					return
				}
				if u.InputTokens <= 0 {
					t.Errorf("usage %+v: no input counted for a request the provider took", u)
				}
				if u.Estimated <= 0 || u.Estimated > u.InputTokens+u.OutputTokens {
					t.Errorf("usage %+v: want an estimate, said so", u)
				}
				if a.name == llm.ProviderAnthropic && c.streamed && c.streamedText && u.InputTokens != usage.InputTokens {
					t.Errorf("input %d, want %d: Anthropic's message_start says it", u.InputTokens, usage.InputTokens)
				}
				if c.streamedText && (pieces == 0 || u.OutputTokens < pieces) {
					t.Errorf("output %d tokens for %d pieces streamed", u.OutputTokens, pieces)
				}
				if !c.streamedText && u.OutputTokens != 0 {
					t.Errorf("output %d tokens, none streamed", u.OutputTokens)
				}
			})
		}
	}
}
