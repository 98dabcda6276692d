package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

func assistantText(s string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}
}

// conversation builds n turns, each the user's "turn i: …" of about size
// bytes, a tool call, its result of size bytes and an answer; current is
// the index of the last turn's message.
func conversation(n, size int) (h []llm.Message, current int) {
	for i := range n {
		current = len(h)
		id := fmt.Sprintf("c%d", i)
		h = append(h, userText(fmt.Sprintf("turn %d: %s", i, strings.Repeat("u", size))), callMsg(id),
			resultMsg(id, size, false), assistantText(fmt.Sprintf("answer %d", i)))
	}
	return h, current
}

// turnStarts are the indexes of the user's own messages of h.
func turnStarts(h []llm.Message) map[int]bool {
	starts := map[int]bool{}
	for i, m := range h {
		if StartsTurn(m) {
			starts[i] = true
		}
	}
	return starts
}

// Chunk: nothing while the request fits or nothing old is left; else whole
// old turns from the summary on, until the request is about half the
// budget, the current turn never.
func TestSummaryChunk(t *testing.T) {
	h, current := conversation(20, 4_000) // a turn is ~2,000 tokens, the whole ~40,000
	tests := []struct {
		name    string
		limit   int
		summary Summary
		current int
		// want: 0, or the chunk's end must be a turn start after the
		// summary and leave the request at most half the limit.
		none bool
	}{
		{name: "fits", limit: 100_000, current: current, none: true},
		{name: "over", limit: 30_000, current: current},
		{name: "over, a summary before", limit: 30_000, current: current, summary: Summary{Text: "earlier", Covers: 8}},
		{name: "over, all old turns summarised", limit: 3_000, current: current, summary: Summary{Text: "earlier", Covers: current}, none: true},
		{name: "small budget: every old turn", limit: 4_000, current: current},
		{name: "mid-history current turn", limit: 10_000, current: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hist := h
			if tt.current < current {
				hist = h[:tt.current+4]
			}
			c := Compaction{History: hist, Summary: tt.summary, Current: tt.current, Fixed: 1_000, Limit: tt.limit}
			end := c.Chunk()
			if tt.none {
				if end != 0 {
					t.Fatalf("chunk to %d, want none", end)
				}
				return
			}
			if end <= tt.summary.Covers || end > tt.current || !turnStarts(hist)[end] {
				t.Fatalf("chunk ends at %d (summary covers %d, current %d): not a turn start after the summary", end, tt.summary.Covers, tt.current)
			}
			after := Compaction{History: hist, Summary: Summary{Text: strings.Repeat("s", 4*SummaryTokens(tt.limit)), Covers: end},
				Current: tt.current, Fixed: 1_000, Limit: tt.limit}
			if got := after.tokens(); got > tt.limit/2 && end < tt.current {
				// Only when the summary request could not hold the next
				// turn too: the next summary takes it.
				next := end + 1
				for next < tt.current && !turnStarts(hist)[next] {
					next++
				}
				req := c.Request(next)
				if n := RequestTokens(req.System, nil, req.Messages, 0); n < int64(tt.limit-SummaryTokens(tt.limit)-200) {
					t.Errorf("after a summary to %d the request is ~%d tokens, over half of %d, and the summary request could hold the next turn (~%d tokens)", end, got, tt.limit, n)
				}
			}
			// The chunk is no bigger than needed: one turn fewer would
			// leave the request over half the budget.
			prev := tt.summary.Covers
			for i := end - 1; i > tt.summary.Covers; i-- {
				if turnStarts(hist)[i] {
					prev = i
					break
				}
			}
			if prev > tt.summary.Covers {
				fewer := after
				fewer.Summary.Covers = prev
				if got := fewer.tokens(); got <= tt.limit/2 {
					t.Errorf("a chunk to %d would do (~%d tokens), it ends at %d", prev, got, end)
				}
			}
		})
	}
}

// The summary request stays within the budget whatever the oldest turns
// hold: the chunk stops where the request would be full (the next turns
// go into the next summary), and a turn too big by itself — long results,
// a pasted document, huge tool arguments, forty steps — is cut to its head.
func TestSummaryRequestFitsTheBudget(t *testing.T) {
	const limit = 30_000
	steps := func() ([]llm.Message, int) {
		h := []llm.Message{userText("turn 0: browse")}
		for s := range 40 {
			id := fmt.Sprintf("s%d", s)
			h = append(h, callMsg(id), resultMsg(id, 8_000, false))
		}
		h = append(h, assistantText("done"))
		return append(h, userText("turn 1: now")), len(h)
	}
	tests := []struct {
		name string
		h    func() ([]llm.Message, int)
	}{
		{"long results", func() ([]llm.Message, int) { return conversation(6, 40_000) }},
		{"a pasted document", func() ([]llm.Message, int) {
			return []llm.Message{userText(strings.Repeat("document ", 50_000)), assistantText("read it"), userText("and now?")}, 2
		}},
		{"huge tool arguments", func() ([]llm.Message, int) {
			call := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
				ToolCall: &llm.ToolCall{ID: "a", Name: "echo", Arguments: []byte(`"` + strings.Repeat("x", 400_000) + `"`)}}}}
			return []llm.Message{userText("echo this"), call, resultMsg("a", 10, false), assistantText("echoed"), userText("next")}, 4
		}},
		{"forty steps in a turn", steps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, current := tt.h()
			c := Compaction{History: h, Current: current, Fixed: 1_000, Limit: limit}
			end := c.Chunk()
			if end == 0 || end > current {
				t.Fatalf("chunk to %d of %d", end, current)
			}
			req := c.Request(end)
			if got := RequestTokens(req.System, nil, req.Messages, req.MaxTokens); got > int64(c.Limit) {
				t.Errorf("the summary request is ~%d tokens, over the budget %d", got, c.Limit)
			}
		})
	}
}

// The summary request: no tools, instructions that ask for a summary,
// the previous summary and the chunk as text, nothing of the current turn.
func TestSummaryRequest(t *testing.T) {
	h, current := conversation(10, 4_000)
	h[4].Parts = append(h[4].Parts, llm.Part{Kind: llm.PartText, Text: "the locker code is 4821"})
	c := Compaction{History: h, Summary: Summary{Text: "The user is called Ada.", Covers: 4}, Current: current, Fixed: 1_000, Limit: 12_000}
	end := c.Chunk()
	req := c.Request(end)
	if len(req.Tools) != 0 || req.MaxTokens != SummaryTokens(c.Limit) {
		t.Errorf("tools %d, max tokens %d", len(req.Tools), req.MaxTokens)
	}
	if !llmtest.AsksForSummary(llmtest.Request{LLM: req}) {
		t.Error("the fake model does not see a summary request")
	}
	text := llmtest.LastUserText(req)
	for _, want := range []string{"The user is called Ada.", "the locker code is 4821", "User: turn 1:", "Assistant called the tool browser_snapshot", "The tool browser_snapshot returned: xxx"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary request lacks %q", want)
		}
	}
	if strings.Contains(text, "turn 0:") {
		t.Error("the summary request repeats what the previous summary stands for")
	}
	if strings.Contains(text, fmt.Sprintf("turn %d:", (end/4))) || strings.Contains(text, "turn 9:") {
		t.Error("the summary request holds turns after the chunk")
	}
	for _, want := range []string{"fact", "names", "numbers", "decisions", "open tasks", "file paths", "what it established"} {
		if !strings.Contains(req.System, want) {
			t.Errorf("the instructions do not ask to keep %q", want)
		}
	}
}

// Summarise, and the request made with its result: made from the old
// turns, again with the previous summary, or left as it was when the
// model fails — the request is then trimmed as FitBudget trims it.
func TestSummarise(t *testing.T) {
	h, current := conversation(24, 4_000)
	const fixed, limit = 1_000, 40_000
	fail := errors.New("the model is down")
	tests := []struct {
		name    string
		prev    Summary
		answer  llm.Response
		err     error
		made    bool
		wantErr error
	}{
		{name: "first summary", answer: llm.Response{Text: "The user asked about 20 things."}, made: true},
		{name: "re-summary", prev: Summary{Text: "Earlier: the user is Ada.", Covers: 8}, answer: llm.Response{Text: "Ada; 20 things."}, made: true},
		{name: "model fails", err: fail, wantErr: fail},
		{name: "model fails with a summary before", prev: Summary{Text: "Earlier: the user is Ada.", Covers: 8}, err: fail, wantErr: fail},
		{name: "empty answer", answer: llm.Response{Text: "  \n"}, wantErr: ErrEmptySummary},
		{name: "cut answer", answer: llm.Response{Text: "Ada", StopReason: llm.StopMaxTokens}, made: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compaction{History: h, Summary: tt.prev, Current: current, Fixed: fixed, Limit: limit}
			var asked []llm.Request
			sum, made, err := Summarise(context.Background(), c, func(_ context.Context, req llm.Request) (llm.Response, error) {
				asked = append(asked, req)
				return tt.answer, tt.err
			})
			if made != tt.made || !errors.Is(err, tt.wantErr) || len(asked) != 1 {
				t.Fatalf("made %v, err %v, %d requests", made, err, len(asked))
			}
			if tt.prev.Text != "" && !strings.Contains(llmtest.LastUserText(asked[0]), tt.prev.Text) {
				t.Error("the previous summary is not in the request")
			}
			c.Summary = sum
			out := c.Fit()
			if got := total(fixed, out); got > limit {
				t.Errorf("request of ~%d tokens over %d", got, limit)
			}
			if !made {
				if !reflect.DeepEqual(sum, tt.prev) {
					t.Errorf("summary %+v, want it unchanged %+v", sum, tt.prev)
				}
				if tt.prev.Text == "" && !reflect.DeepEqual(out, FitBudget(h, current, fixed, limit)) {
					t.Error("without a summary the request is not today's trimming")
				}
				if tt.prev.Text != "" && !strings.Contains(llmtest.LastUserText(llm.Request{Messages: out[:1]}), tt.prev.Text) {
					t.Error("the summary made before is not the head of the trimmed request")
				}
				return
			}
			if sum.Covers != c.Chunk() && sum.Covers <= tt.prev.Covers {
				t.Errorf("summary covers %d (before %d)", sum.Covers, tt.prev.Covers)
			}
			head, _ := sum.Message()
			if !reflect.DeepEqual(out[0], head) || !strings.Contains(head.Parts[0].Text, strings.TrimSpace(tt.answer.Text)) {
				t.Errorf("the request's head is %+v", out[0])
			}
			if tt.answer.StopReason == llm.StopMaxTokens && !strings.Contains(sum.Text, "cut at its length limit") {
				t.Error("a cut summary does not say so")
			}
			if !reflect.DeepEqual(out[1:], h[sum.Covers:]) {
				t.Error("the messages after the summary are not the history after it, whole")
			}
			if got := total(fixed, out); got > limit/2 {
				t.Errorf("after the summary the request is ~%d tokens, want at most half of %d", got, limit)
			}
		})
	}
}

// The summary stays the head of requests that grow (the prefix the cache
// reads stays the same) until the budget is reached again; no request
// needs a summary while it fits.
func TestSummaryIsStableUntilTheBudgetIsReachedAgain(t *testing.T) {
	h, _ := conversation(40, 4_000)
	const fixed, limit = 1_000, 30_000
	var sum Summary
	summaries := 0
	var prevHead llm.Message
	for cur := 0; cur < len(h); cur += 4 {
		c := Compaction{History: h[:cur+4], Summary: sum, Current: cur, Fixed: fixed, Limit: limit}
		next, made, err := Summarise(context.Background(), c, func(_ context.Context, req llm.Request) (llm.Response, error) {
			return llm.Response{Text: fmt.Sprintf("summary %d", summaries)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if made {
			summaries++
			sum = next
		}
		c.Summary = sum
		out := c.Fit()
		if got := total(fixed, out); got > limit {
			t.Fatalf("turn %d: request of ~%d tokens", cur/4, got)
		}
		if !made && sum.Text != "" && !reflect.DeepEqual(out[0], prevHead) {
			t.Fatalf("turn %d: the head changed without a summary", cur/4)
		}
		if sum.Text != "" {
			prevHead = out[0]
		}
	}
	// 40 turns of ~2,000 tokens, a summary brings ~30,000 to ~15,000:
	// one every ~7 turns, not every turn.
	if summaries < 3 || summaries > 8 {
		t.Errorf("%d summaries over 40 turns", summaries)
	}
}
