package session

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// budget is an Allowance of a number of tokens per chat, recording who
// spent what.
type budget struct {
	mu      sync.Mutex
	left    int
	told    bool
	records []string
	refused chan struct{} // a token per refusal
	models  []string      // the model of each reservation
}

func (b *budget) Reserve(_ context.Context, chat, user int64, model string, _, _ int64) (func(llm.Usage), string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.models = append(b.models, model)
	if b.left > 0 {
		return func(u llm.Usage) { b.record(chat, user, u) }, "", nil
	}
	b.refused <- struct{}{}
	if b.told {
		return nil, "", nil
	}
	b.told = true
	return nil, fmt.Sprintf("chat %d: no more today", chat), nil
}

func (b *budget) record(chat, user int64, u llm.Usage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= u.InputTokens + u.OutputTokens
	b.records = append(b.records, fmt.Sprintf("%d/%d: %d+%d", chat, user, u.InputTokens, u.OutputTokens))
}

func (b *budget) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.records...)
}

// Every model request is reserved first and recorded after, with the
// user whose message started the turn: the turn's steps and its servers'
// sampling. Once the allowance is used, the turn ends with the notice
// (once) and no request is made.
func TestAllowance(t *testing.T) {
	b := &budget{left: 300, refused: make(chan struct{}, 10)}
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		u := llm.Usage{InputTokens: 40, OutputTokens: 10}
		switch {
		case req.System == "Answer briefly.":
			return llm.Response{Text: "42", Usage: u}, nil
		case len(llmtest.LastToolResults(req)) > 0:
			return llm.Response{Text: "done", Usage: u}, nil
		}
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: fakemcp.ToolSample, Arguments: []byte(`{"prompt":"?"}`)}}, Usage: u}, nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeAsk}, sampling: true, allowance: b})
	for i, want := range []string{"done", "done", "chat 40: no more today"} {
		if err := e.manager.Deliver(chat.In(40), Message{Text: "go", From: 5}); err != nil {
			t.Fatal(err)
		}
		if got := e.chat.waitTexts(t, chat.In(40), i+1)[i]; got != want {
			t.Errorf("turn %d: %q, want %q", i+1, got, want)
		}
	}
	// Two turns of two steps and a sampling each used all 300 tokens.
	if got := b.all(); len(got) != 6 || got[1] != "40/5: 40+10" {
		t.Errorf("records %q: want 6, each for chat 40 and user 5", got)
	}
	requests := len(e.model.Requests())
	e.deliver(chat.In(40), "again")
	<-b.refused // the third turn's
	<-b.refused // this one's
	if n := len(e.model.Requests()); n != requests {
		t.Errorf("%d model requests once the allowance was used", n-requests)
	}
	e.close()
	if texts := e.chat.Texts(chat.In(40)); len(texts) != 3 {
		t.Errorf("texts %q: the notice is sent once", texts)
	}
}
