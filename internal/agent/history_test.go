package agent

import (
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}
}

func callMsg(id string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: id, Name: "browser_snapshot", Arguments: []byte(`{}`)}}}}
}

func resultMsg(id string, size int, image bool) llm.Message {
	content := []llm.Part{{Kind: llm.PartText, Text: strings.Repeat("x", size)}}
	if image {
		content = append(content, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: "image/png", Data: []byte("png")}})
	}
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartToolResult,
		ToolResult: &llm.ToolResult{CallID: id, Name: "browser_snapshot", Content: content}}}}
}

func TestRepairToolCalls(t *testing.T) {
	h := []llm.Message{userText("go"), callMsg("a"), userText("hello again")}
	out := RepairToolCalls(h)
	if len(out) != 3 || out[2].Parts[0].ToolResult == nil || out[2].Parts[0].ToolResult.CallID != "a" ||
		!out[2].Parts[0].ToolResult.IsError || out[2].Parts[1].Text != "hello again" {
		t.Errorf("repaired = %+v", out)
	}
	if h[2].Parts[0].Text != "hello again" || len(h[2].Parts) != 1 {
		t.Error("the history was modified")
	}
	tail := RepairToolCalls([]llm.Message{userText("go"), callMsg("b")})
	if len(tail) != 3 || tail[2].Parts[0].ToolResult.CallID != "b" {
		t.Errorf("trailing call: %+v", tail)
	}
	ok := []llm.Message{userText("go"), callMsg("c"), resultMsg("c", 1, false)}
	if got := RepairToolCalls(ok); &got[0] != &ok[0] {
		t.Error("a sound history was copied")
	}
}
