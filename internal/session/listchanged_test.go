package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// notifications/tools/list_changed: the chat whose server sent it gets the
// refreshed list from its next step, another chat from its next turn, and
// a tool that vanished answers why when the model calls it anyway.
func TestToolsListChangedReachesTheNextStep(t *testing.T) {
	var mu sync.Mutex
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	offers := func(req llm.Request, name string) bool {
		return slices.ContainsFunc(req.Tools, func(tool llm.Tool) bool { return tool.Name == name })
	}
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		results := llmtest.LastToolResults(req)
		last := ""
		if len(results) > 0 {
			last = results[0].Name
		}
		switch llmtest.LastUserText(req) {
		case "add":
			switch last {
			case "":
				if offers(req, "late") {
					fail("the first step offers late before it was added")
				}
				return toolCall("a1", fakemcp.ToolAddTool, `{"name":"late"}`), nil
			case fakemcp.ToolAddTool:
				if !offers(req, "late") {
					fail("the step after add_tool does not offer late: %d tools", len(req.Tools))
				}
				return toolCall("a2", "late", `{}`), nil
			case "late":
				if got := llmtest.ResultText(results[0]); got != "I am late" {
					fail("late answered %q", got)
				}
			}
		case "look":
			if !offers(req, "late") {
				fail("another chat's next turn does not offer late")
			}
		case "remove":
			switch last {
			case "":
				return toolCall("r1", fakemcp.ToolRemoveTool, `{"name":"late"}`), nil
			case fakemcp.ToolRemoveTool:
				if offers(req, "late") {
					fail("the step after remove_tool still offers late")
				}
				return toolCall("r2", "late", `{}`), nil
			case "late":
				if got := llmtest.ResultText(results[0]); !results[0].IsError || !strings.Contains(got, "no longer offered") ||
					!strings.Contains(got, "fake MCP server's tool list changed") {
					fail("the vanished tool answered %q (error %v), want why", got, results[0].IsError)
				}
			}
		}
		return llm.Response{Text: "done"}, nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeChanging}})
	e.deliver(chat.In(40), "add")
	e.chat.waitTexts(t, chat.In(40), 1)
	e.deliver(chat.In(41), "look")
	e.chat.waitTexts(t, chat.In(41), 1)
	e.deliver(chat.In(40), "remove")
	e.chat.waitTexts(t, chat.In(40), 2)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if n := len(e.model.Requests()); n != 7 {
		t.Errorf("%d model requests, want 7", n)
	}
}
