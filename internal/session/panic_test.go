package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A panic in a chat's turn — in the turn itself or in one of its tool
// calls — ends that turn with a reply to the chat, never the process, and
// the chat goes on: the next message gets an answer.
func TestPanicEndsTheTurnNotTheProcess(t *testing.T) {
	tests := []struct {
		name   string
		answer func(n int, req llm.Request) llm.Response // n counts the model calls
		chat   func(c *fakeChat)
	}{
		{
			name: "in the model call",
			answer: func(n int, req llm.Request) llm.Response {
				if n == 1 {
					panic("the model adapter blew up")
				}
				return llm.Response{Text: "re: " + llmtest.LastUserText(req)}
			},
		},
		{
			name: "in a tool call",
			answer: func(n int, req llm.Request) llm.Response {
				if n == 1 {
					return toolCall("s1", SendToolName, `{"path":"notes.txt"}`)
				}
				return llm.Response{Text: "re: " + llmtest.LastUserText(req)}
			},
			chat: func(c *fakeChat) { c.panicOnSend.Store(true) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
				return tt.answer(int(calls.Add(1)), req), nil
			}, envOptions{})
			if tt.chat != nil {
				tt.chat(e.chat)
			}
			ws := e.manager.Workspace(chat.In(30))
			if err := os.MkdirAll(ws, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes"), 0o600); err != nil {
				t.Fatal(err)
			}
			e.deliver(chat.In(30), "first")
			got := e.chat.waitTexts(t, chat.In(30), 1)
			if !strings.Contains(got[0], "Sorry, something went wrong with this conversation") {
				t.Fatalf("reply after the panic = %q", got[0])
			}
			if e.manager.Stop(chat.In(30)) { // the reply comes after the turn is cleared
				t.Error("the turn still counts as running after the panic")
			}
			e.deliver(chat.In(30), "second")
			got = e.chat.waitTexts(t, chat.In(30), 2)
			if got[1] != "re: second" {
				t.Errorf("the next message got %q", got[1])
			}
		})
	}
}
