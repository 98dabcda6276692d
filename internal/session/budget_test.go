package session

import (
	"fmt"
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

// browsing builds turns of 40 tool steps each with 20 KB page snapshots.
func browsing(turns, steps int) ([]llm.Message, int) {
	var h []llm.Message
	current := 0
	for t := range turns {
		current = len(h)
		h = append(h, userText(fmt.Sprintf("turn %d", t)))
		for s := range steps {
			id := fmt.Sprintf("%d-%d", t, s)
			h = append(h, callMsg(id), resultMsg(id, 20_000, s%5 == 0))
		}
		h = append(h, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: "done"}}})
	}
	return h, current
}

func total(fixed int, msgs []llm.Message) int {
	n := fixed
	for _, m := range msgs {
		n += estimateMessage(m)
	}
	return n
}

func TestBudgetElidesOldToolResultsFirst(t *testing.T) {
	h, current := browsing(3, 40)
	const limit, fixed = 100_000, 5_000
	out := fitBudget(h, current, fixed, limit)
	if got := total(fixed, out); got > limit {
		t.Errorf("request of ~%d tokens exceeds the limit %d", got, limit)
	}
	// Nothing of the current turn is cut, and calls keep their results.
	if got := lastUserText(llm.Request{Messages: out}); got != "turn 2" {
		t.Errorf("the current turn's message is %q", got)
	}
	calls, results := map[string]bool{}, map[string]bool{}
	for _, m := range out {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				calls[p.ToolCall.ID] = true
			}
			if p.ToolResult != nil {
				results[p.ToolResult.CallID] = true
			}
		}
	}
	for id := range calls {
		if !results[id] {
			t.Errorf("call %s lost its result", id)
		}
	}
	if len(h) != 3*82 {
		t.Errorf("history was modified: %d messages", len(h))
	}
}

// A 40-step browsing turn after a long conversation: the request stays
// bounded however long the history grows.
func TestBudgetBoundsAGrowingConversation(t *testing.T) {
	const limit, fixed = 60_000, 3_000
	for _, turns := range []int{1, 5, 20} {
		h, current := browsing(turns, 40)
		h = h[:len(h)-1] // mid-turn: the newest message holds tool results
		out := fitBudget(h, current, fixed, limit)
		if got := total(fixed, out); got > limit {
			t.Errorf("%d turns: ~%d tokens, limit %d", turns, got, limit)
		}
		if got := lastToolResults(llm.Request{Messages: out}); resultText(got[0]) == elidedNote {
			t.Errorf("%d turns: the newest tool result was elided", turns)
		}
	}
}

func TestBudgetKeepsShortHistoriesWhole(t *testing.T) {
	h := []llm.Message{userText("a"), {Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: "b"}}}, userText("c")}
	out := fitBudget(h, 2, 100, 10_000)
	if len(out) != 3 || &out[0] != &h[0] {
		t.Errorf("a short history was copied or cut")
	}
}

func TestRepairToolCalls(t *testing.T) {
	h := []llm.Message{userText("go"), callMsg("a"), userText("hello again")}
	out := repairToolCalls(h)
	if len(out) != 3 || out[2].Parts[0].ToolResult == nil || out[2].Parts[0].ToolResult.CallID != "a" ||
		!out[2].Parts[0].ToolResult.IsError || out[2].Parts[1].Text != "hello again" {
		t.Errorf("repaired = %+v", out)
	}
	if h[2].Parts[0].Text != "hello again" || len(h[2].Parts) != 1 {
		t.Error("the history was modified")
	}
	tail := repairToolCalls([]llm.Message{userText("go"), callMsg("b")})
	if len(tail) != 3 || tail[2].Parts[0].ToolResult.CallID != "b" {
		t.Errorf("trailing call: %+v", tail)
	}
	ok := []llm.Message{userText("go"), callMsg("c"), resultMsg("c", 1, false)}
	if got := repairToolCalls(ok); &got[0] != &ok[0] {
		t.Error("a sound history was copied")
	}
}
