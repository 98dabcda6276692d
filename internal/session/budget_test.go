package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}
}

func resultMsg(id string, size int, image bool) llm.Message {
	content := []llm.Part{{Kind: llm.PartText, Text: strings.Repeat("x", size)}}
	if image {
		content = append(content, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: "image/png", Data: []byte("png")}})
	}
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartToolResult,
		ToolResult: &llm.ToolResult{CallID: id, Name: "browser_snapshot", Content: content}}}}
}

func total(fixed int, msgs []llm.Message) int {
	n := fixed
	for _, m := range msgs {
		n += agent.EstimateMessage(m)
	}
	return n
}

// Through a session: the newest result is cut so the request that reaches
// the model fits the context budget, and the transcript keeps it whole.
func TestRequestWithAHugeNewestResultFitsTheBudget(t *testing.T) {
	const limit = 3_000 // the system prompt and the fake's tools are ~1,100; the text ~4,700
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "read it"}, nil
		}
		return toolCall("l1", fakemcp.ToolLongText, `{}`), nil
	}
	e := newEnv(t, answer, envOptions{contextTokens: limit})
	e.deliver(chat.In(31), "read the long text")
	e.chat.waitTexts(t, chat.In(31), 1)
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	req := reqs[1]
	if got := total(agent.EstimateText(req.System)+agent.EstimateTools(req.Tools), req.Messages); got > limit {
		t.Errorf("request of ~%d tokens, limit %d", got, limit)
	}
	sent := llmtest.ResultText(llmtest.LastToolResults(req)[0])
	if !strings.HasPrefix(sent, "line 1\n") || !strings.Contains(sent, "left out to fit the context window") {
		t.Errorf("the result sent: %.100q … %q", sent, sent[max(0, len(sent)-200):])
	}
	transcript, err := os.ReadFile(filepath.Join(e.manager.Private(chat.In(31)), transcriptName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(transcript), "left out to fit") || !strings.Contains(string(transcript), "line 1000\\n") {
		t.Error("the transcript does not hold the whole result")
	}
}
