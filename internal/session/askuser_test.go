package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

func TestAskUserArguments(t *testing.T) {
	cases := []struct{ args, problem string }{
		{`{"question":"Size?","options":["S","L"]}`, ""},
		{`{"question":"Size?","options":["S","L"],"allow_text":true}`, ""},
		{`{"question":" ","options":["S","L"]}`, "question is empty"},
		{`{"question":"Size?","options":["S"]}`, "options must hold 2 to 8 answers (got 1)"},
		{`{"question":"Size?","options":["1","2","3","4","5","6","7","8","9"]}`, "(got 9)"},
		{`{"question":"Size?","options":["S","s"]}`, "option 2 is given twice"},
		{`{"question":"Size?","options":["S",""]}`, "option 2 is empty"},
		{`{"question":"Size?","options":["S","` + strings.Repeat("x", 65) + `"]}`, "option 2 is over 64 characters"},
		{`{"question":"` + strings.Repeat("q", 1001) + `","options":["S","L"]}`, "question is over 1000 characters"},
		{`{"question":"Size?","options":"S, L"}`, "options a list of strings"},
	}
	for _, tc := range cases {
		_, problem := askUserArguments([]byte(tc.args))
		if tc.problem == "" && problem != "" || !strings.Contains(problem, tc.problem) {
			t.Errorf("%s: problem %q, want %q", tc.args, problem, tc.problem)
		}
	}
}

// The model's question goes to the chat with the turn's user, and the
// answer is the tool's result: a choice, a typed text, no answer in time,
// or a chat that cannot ask.
func TestAskUserTool(t *testing.T) {
	cases := []struct {
		name   string
		ask    func(ctx context.Context, q UserQuestion) (UserAnswer, error)
		result string
	}{
		{"chosen", func(_ context.Context, q UserQuestion) (UserAnswer, error) {
			if q.UserID != 42 || q.Question != "Size?" || len(q.Options) != 2 || !q.AllowText || q.Timeout != DefaultApprovalTimeout {
				return UserAnswer{}, fmt.Errorf("question %+v", q)
			}
			return UserAnswer{Choice: "Large", By: "Ann"}, nil
		}, `Ann chose "Large".`},
		{"typed", func(context.Context, UserQuestion) (UserAnswer, error) {
			return UserAnswer{Text: "medium", By: "Ann"}, nil
		}, `Ann answered in their own words: "medium"`},
		{"no answer", func(context.Context, UserQuestion) (UserAnswer, error) {
			return UserAnswer{}, fmt.Errorf("%w within 5 minutes", ErrNoUserAnswer)
		}, "nobody answered within 5 minutes"},
		{"a chat that cannot ask", nil, "this chat cannot show questions with buttons"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
				if res := llmtest.LastToolResults(req); len(res) > 0 {
					return llm.Response{Text: "result: " + res[0].Content[0].Text}, nil
				}
				return toolCall("c1", AskUserToolName, `{"question":"Size?","options":["Small","Large"],"allow_text":true}`), nil
			}, envOptions{askUser: tc.ask})
			if err := e.manager.Deliver(chat.In(1), Message{Text: "order a shirt", From: 42}); err != nil {
				t.Fatal(err)
			}
			if got := e.chat.waitTexts(t, chat.In(1), 1); !strings.Contains(got[0], tc.result) {
				t.Errorf("the model was told %q, want %q", got[0], tc.result)
			}
		})
	}
}
