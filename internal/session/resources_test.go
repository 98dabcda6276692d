package session

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// The resource tools are MCP tools to the session: deferred under tool
// search (named in the system prompt, found by tool_search), and a call by
// name reads the resource, its text redacted like a tool's.
func TestResourceToolsDeferredAndRun(t *testing.T) {
	var mu sync.Mutex
	var first llm.Request
	var result llm.ToolResult
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			result = res[0]
			return llm.Response{Text: "done"}, nil
		}
		first = req
		return toolCall("r1", mcpclient.ReadResourceTool, `{"server":"fake","uri":"`+fakemcp.ResourceNotes+`"}`), nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeResources}, toolSearch: ToolSearchOn, secrets: []string{fakemcp.NotesText}})
	e.deliver(chat.In(50), "read the notes")
	e.chat.waitTexts(t, chat.In(50), 1)
	mu.Lock()
	defer mu.Unlock()
	offered := func(name string) bool {
		return slices.ContainsFunc(first.Tools, func(tool llm.Tool) bool { return tool.Name == name })
	}
	if offered(mcpclient.ReadResourceTool) || offered(mcpclient.ListResourcesTool) || !offered(ToolSearchName) {
		t.Errorf("the resource tools are not deferred: %d tools", len(first.Tools))
	}
	if !strings.Contains(first.System, "- "+mcpclient.ResourcesGroup+": "+mcpclient.ListResourcesTool+", "+mcpclient.ReadResourceTool) {
		t.Errorf("the system prompt does not name the deferred resource tools:\n%s", first.System)
	}
	if got := llmtest.ResultText(result); result.IsError || !strings.HasPrefix(got, "Resource "+fakemcp.ResourceNotes+":\n") || strings.Contains(got, fakemcp.NotesText) {
		t.Errorf("the read: %q (error %v), want the notes, redacted", got, result.IsError)
	}
}
