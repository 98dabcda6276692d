package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// elicitModel calls elicit once and records what it returned.
type elicitModel struct {
	mu     sync.Mutex
	result string
	done   chan struct{}
}

func newElicitModel() *elicitModel { return &elicitModel{done: make(chan struct{})} }

func (m *elicitModel) answer(_ context.Context, req llm.Request) (llm.Response, error) {
	if res := llmtest.LastToolResults(req); len(res) > 0 {
		m.mu.Lock()
		m.result = llmtest.ResultText(res[0])
		m.mu.Unlock()
		close(m.done)
		return llm.Response{Text: "done"}, nil
	}
	return llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: fakemcp.ToolElicit, Arguments: []byte(`{"message":"Who are you?"}`)}}}, nil
}

func (m *elicitModel) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the model never got the tool's result")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.result
}

// A chat that can ask gets the server's form with the user who started the
// turn, and its answer goes to the server; a chat that cannot ask declares
// no elicitation, so its servers get no answer from anyone.
func TestElicitationAsksTheChat(t *testing.T) {
	t.Run("asked", func(t *testing.T) {
		model := newElicitModel()
		var got []ElicitRequest
		var mu sync.Mutex
		e := newEnv(t, model.answer, envOptions{modes: []string{fakemcp.ModeAsk},
			elicit: func(_ context.Context, req ElicitRequest) (chat.ElicitResult, error) {
				mu.Lock()
				got = append(got, req)
				mu.Unlock()
				return chat.ElicitResult{Action: chat.ElicitAccept,
					Content: map[string]any{"name": "Ada", "subscribe": true}}, nil
			}})
		if err := e.manager.Deliver(chat.In(41), Message{Text: "sign me up", From: 7}); err != nil {
			t.Fatal(err)
		}
		res := model.wait(t)
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0].UserID != 7 || got[0].Server != "fake" || got[0].Message != "Who are you?" || len(got[0].Form.Fields) != 4 {
			t.Fatalf("the chat was asked %+v", got)
		}
		// The client filled in the default age.
		if res != `accept {"age":30,"name":"Ada","subscribe":true}` {
			t.Errorf("the server got %q", res)
		}
	})
	t.Run("no elicitor", func(t *testing.T) {
		model := newElicitModel()
		e := newEnv(t, model.answer, envOptions{modes: []string{fakemcp.ModeAsk}})
		e.deliver(chat.In(42), "sign me up")
		if res := model.wait(t); strings.HasPrefix(res, "accept") {
			t.Errorf("the server got %q from a chat that cannot ask", res)
		}
	})
}

// /stop ends the question: the chat's Elicit sees its context cancelled,
// and the server gets cancel.
func TestElicitationEndsWithTheTurn(t *testing.T) {
	asked := make(chan struct{})
	ended := make(chan error, 1)
	e := newEnv(t, newElicitModel().answer, envOptions{modes: []string{fakemcp.ModeAsk},
		elicit: func(ctx context.Context, _ ElicitRequest) (chat.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			ended <- ctx.Err()
			return chat.ElicitResult{Action: chat.ElicitCancel}, ctx.Err()
		}})
	e.deliver(chat.In(43), "sign me up")
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the chat was never asked")
	}
	if !e.manager.Stop(chat.In(43)) {
		t.Fatal("no turn to stop")
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the question ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("/stop did not end the question")
	}
	e.chat.waitTexts(t, chat.In(43), 1)
}

// A question that comes while no turn runs (a server asking between
// calls) has nobody to answer it: cancelled, without asking the chat.
func TestElicitationOutsideATurnIsCancelled(t *testing.T) {
	e := newEnv(t, newElicitModel().answer, envOptions{})
	asked := false
	el := elicitor{s: &session{id: chat.In(44), m: e.manager}, ask: elicitingChat{e.chat, func(context.Context, ElicitRequest) (chat.ElicitResult, error) {
		asked = true
		return chat.ElicitResult{Action: chat.ElicitAccept}, nil
	}}}
	res, err := el.Elicit(context.Background(), chat.Elicitation{Server: "fake", Mode: chat.ElicitForm})
	if err != nil || res.Action != chat.ElicitCancel || asked {
		t.Errorf("Elicit = %+v, %v (asked: %v); want cancel without asking", res, err, asked)
	}
}

// The call's timeout ends the question with context.DeadlineExceeded as
// its cause (however the request was ended: the call's end cancels it as
// well), so that the chat says nobody answered in time.
func TestElicitationTimesOutWithTheCall(t *testing.T) {
	ended := make(chan error, 1)
	model := newElicitModel()
	e := newEnv(t, model.answer, envOptions{modes: []string{fakemcp.ModeAsk},
		server: func(c *mcpconfig.ServerConfig) { c.CallTimeout = time.Second },
		elicit: func(ctx context.Context, _ ElicitRequest) (chat.ElicitResult, error) {
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return chat.ElicitResult{Action: chat.ElicitCancel}, ctx.Err()
		}})
	e.deliver(chat.In(45), "sign me up")
	select {
	case cause := <-ended:
		if !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("the question ended with %v, want the deadline", cause)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call's timeout did not end the question")
	}
	model.wait(t)
}
