package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// Whatever the model or a tool sends, what reaches the transcript, the
// model and the chat is bounded: texts are cut at maxPartText with a note
// saying so, oversized tool calls are refused, and no transcript line
// outgrows what the reader takes.
func TestTextsReachingTheTranscriptAreCapped(t *testing.T) {
	const huge = 3 << 20
	big := strings.Repeat("a", huge)
	tests := []struct {
		name string
		// first answers the user's message; the second step ("done") ends
		// the turn after tool calls.
		first func() llm.Response
		// wantReply is in the reply; wantResult in the tool result the
		// model got.
		wantReply, wantResult string
	}{
		{
			name:      "an answer",
			first:     func() llm.Response { return llm.Response{Text: big} },
			wantReply: "were cut",
		},
		{
			name:       "tool call arguments",
			first:      func() llm.Response { return toolCall("c1", "echo", fmt.Sprintf(`{"text":%q}`, big)) },
			wantReply:  "done",
			wantResult: "over the 256 KB",
		},
		{
			name:       "an error text (a tool name that does not exist)",
			first:      func() llm.Response { return toolCall("c1", big, `{}`) },
			wantReply:  "done",
			wantResult: "there is no tool named",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := int64(60 + i)
			var result string
			answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
				if res := llmtest.LastToolResults(req); len(res) > 0 {
					result = llmtest.ResultText(res[0])
					return llm.Response{Text: "done"}, nil
				}
				return tt.first(), nil
			}
			e := newEnv(t, answer, envOptions{})
			e.deliver(inChat(chat), "go")
			reply := e.chat.waitTexts(t, inChat(chat), 1)[0]
			if !strings.Contains(reply, tt.wantReply) || len(reply) > maxPartText+1024 {
				t.Errorf("reply of %d bytes, want at most %d containing %q", len(reply), maxPartText+1024, tt.wantReply)
			}
			if !strings.Contains(result, tt.wantResult) || len(result) > maxPartText+1024 {
				t.Errorf("tool result of %d bytes (%.80q…), want at most %d containing %q", len(result), result, maxPartText+1024, tt.wantResult)
			}
			for n, line := range readLines(t, filepath.Join(e.manager.Private(inChat(chat)), transcriptName)) {
				if len(line) > 2*maxPartText+4096 {
					t.Errorf("transcript line %d is %d bytes", n+1, len(line))
				}
			}
		})
	}
}

// Tool results are cut to maxPartText per text, and all the texts of one
// message to maxMessageText together, so that the line stays readable.
func TestCapToolResults(t *testing.T) {
	text := func(n int) llm.Part { return llm.Part{Kind: llm.PartText, Text: strings.Repeat("x", n)} }
	tests := []struct {
		name     string
		results  int
		parts    []llm.Part
		maxEach  int
		wantNote bool
	}{
		{"small results are kept", 3, []llm.Part{text(100)}, 100, false},
		{"one huge text", 1, []llm.Part{text(70 << 20)}, maxPartText + 1024, true},
		{"many large results share the message's cap", 200, []llm.Part{text(200 << 10)}, maxMessageText/200 + 1024, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []llm.ToolResult
			for i := range tt.results {
				rs = append(rs, llm.ToolResult{CallID: fmt.Sprint(i), Content: append([]llm.Part(nil), tt.parts...)})
			}
			capToolResults(rs)
			total := 0
			for _, r := range rs {
				for _, p := range r.Content {
					total += len(p.Text)
					if len(p.Text) > tt.maxEach {
						t.Fatalf("a text of %d bytes, want at most %d", len(p.Text), tt.maxEach)
					}
					if got := strings.Contains(p.Text, "were cut"); got != tt.wantNote {
						t.Fatalf("note = %v, want %v", got, tt.wantNote)
					}
				}
			}
			if total > maxMessageText+tt.results*1024 {
				t.Errorf("%d bytes in all, over %d", total, maxMessageText)
			}
		})
	}
}
