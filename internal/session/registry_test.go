package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// fakeTool is a chat.Tool whose capabilities a test chooses.
type fakeTool struct {
	name  string
	calls *[]string // names called, in order; guarded by mu
	mu    *sync.Mutex
	call  func(ctx context.Context, args json.RawMessage) (chat.Result, error)
}

func (f fakeTool) Spec() chat.Spec { return chat.Spec{Name: f.name} }

func (f fakeTool) Call(ctx context.Context, args json.RawMessage) (chat.Result, error) {
	f.mu.Lock()
	*f.calls = append(*f.calls, f.name)
	f.mu.Unlock()
	if f.call != nil {
		return f.call(ctx, args)
	}
	return chat.TextResult("ran " + f.name), nil
}

type guardedTool struct{ fakeTool }

func (g guardedTool) Guard() chat.Guard { return chat.Guard{Server: "srv", Tool: "mcp_" + g.name} }

type checkedTool struct{ fakeTool }

func (checkedTool) Check(json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("send {\"x\": 1}")
}

type lanedTool struct {
	fakeTool
	lane string
}

func (l lanedTool) Lane() string { return l.lane }

// recordedActivity records the calls the chat is shown.
type recordedActivity struct {
	mu    sync.Mutex
	shown []string
}

func (a *recordedActivity) ToolCall(name string, _ json.RawMessage) {
	a.mu.Lock()
	a.shown = append(a.shown, name)
	a.mu.Unlock()
}

func (a *recordedActivity) Done() {}

// testRunner is a runner over tools (and the toolset ts, for the unknown
// tool's answer) that redacts "secret" and approves nothing.
func testRunner(ts *toolset, tools ...chat.Tool) (*toolRunner, *recordedActivity, *[]string) {
	reg := &registry{tools: ts, byName: map[string]chat.Tool{}}
	for _, t := range tools {
		reg.byName[t.Spec().Name] = t
	}
	act := &recordedActivity{}
	var asked []string
	var mu sync.Mutex
	r := &toolRunner{tools: reg, activity: act, redact: func(s string) string { return strings.ReplaceAll(s, "secret", "[redacted]") },
		approve: func(_ context.Context, g chat.Guarded, name string, _ json.RawMessage) (bool, string) {
			mu.Lock()
			asked = append(asked, name+"="+g.Guard().Tool)
			mu.Unlock()
			return false, "The user denied this call."
		}}
	return r, act, &asked
}

// A call runs the tool its name finds, and what becomes of it depends on
// what the tool says of itself: a Checker's refusal, a Guarded tool's
// approval, a name no tool has (never offered, gone since it was offered,
// not discovered yet) — none of which shows the call or asks anything.
func TestRunnerDispatch(t *testing.T) {
	var mu sync.Mutex
	var called []string
	tool := func(name string) fakeTool { return fakeTool{name: name, calls: &called, mu: &mu} }
	ts := newToolset(nil, ToolPlan{}, nil)
	ts.gone = map[string]string{"old_tool": "srv"}
	ts.discovering = []string{"late"}
	stopped := make(chan struct{})
	tools := []chat.Tool{
		tool("plain"),
		guardedTool{tool("guarded")},
		checkedTool{tool("checked")},
		fakeTool{name: "image", calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
			return chat.Result{Parts: []chat.Part{{Kind: chat.TextPart, Text: "a secret"}, {Kind: chat.ImagePart, Data: []byte{1}, MIMEType: "image/png"}}}, nil
		}},
		fakeTool{name: "empty", calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
			return chat.Result{}, nil
		}},
		fakeTool{name: "broken", calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
			return chat.Result{}, errors.New("closed with secret inside")
		}},
		fakeTool{name: "stopped", calls: &called, mu: &mu, call: func(ctx context.Context, _ json.RawMessage) (chat.Result, error) {
			close(stopped)
			<-ctx.Done()
			return chat.Result{}, ctx.Err()
		}},
	}
	tests := []struct {
		name, args string
		isError    bool
		text       string // the result's text parts, joined
		ran        bool   // the tool was called and the chat shown it
		asked      bool
	}{
		{name: "plain", args: `{}`, text: "ran plain", ran: true},
		{name: "plain", args: `[1]`, isError: true, text: "invalid arguments for plain: an array, not a JSON object"},
		{name: "guarded", args: `{"a":1}`, isError: true, text: "The user denied this call.", asked: true},
		{name: "checked", args: `{}`, isError: true, text: `send {"x": 1}`},
		{name: "image", args: ``, text: "a [redacted]", ran: true},
		{name: "empty", args: `{}`, text: "(no output)", ran: true},
		{name: "broken", args: `{}`, isError: true, text: "closed with [redacted] inside", ran: true},
		{name: "nope", args: `{}`, isError: true, text: `there is no tool named "nope"; the tools of the MCP server late are not known yet`},
		{name: "old_tool", args: `{}`, isError: true, text: "old_tool is no longer offered: the srv MCP server's tool list changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.args, func(t *testing.T) {
			mu.Lock()
			called = nil
			mu.Unlock()
			r, act, asked := testRunner(ts, tools...)
			res := r.run(t.Context(), []llm.ToolCall{{ID: "c", Name: tt.name, Arguments: json.RawMessage(tt.args)}})[0]
			if res.CallID != "c" || res.Name != tt.name || res.IsError != tt.isError || !strings.HasPrefix(llmtest.ResultText(res), tt.text) {
				t.Errorf("result %+v %q, want error %v, text %q…", res, llmtest.ResultText(res), tt.isError, tt.text)
			}
			mu.Lock()
			ran := slices.Equal(called, []string{tt.name})
			mu.Unlock()
			if shown := slices.Equal(act.shown, []string{tt.name}); ran != tt.ran || shown != tt.ran {
				t.Errorf("called %v, shown %v: want both %v", ran, shown, tt.ran)
			}
			if got := len(*asked) > 0; got != tt.asked {
				t.Errorf("asked %v, want %v", *asked, tt.asked)
			}
		})
	}
	t.Run("image kept", func(t *testing.T) {
		r, _, _ := testRunner(ts, tools...)
		res := r.run(t.Context(), []llm.ToolCall{{ID: "c", Name: "image"}})[0]
		if len(res.Content) != 2 || res.Content[1].Image == nil || res.Content[1].Image.MIMEType != "image/png" {
			t.Errorf("content %+v", res.Content)
		}
	})
	t.Run("stopped while running", func(t *testing.T) {
		r, _, _ := testRunner(ts, tools...)
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-stopped; cancel() }()
		res := r.run(ctx, []llm.ToolCall{{ID: "c", Name: "stopped"}})[0]
		if !res.IsError || llmtest.ResultText(res) != stoppedResult {
			t.Errorf("result %q, want %q", llmtest.ResultText(res), stoppedResult)
		}
	})
}

// Calls on one lane run one after another in the order the model made
// them; calls on another lane, or on none, run beside them.
func TestRunnerLanes(t *testing.T) {
	var mu sync.Mutex
	var called []string
	inLane := make(chan struct{}, 1) // a call of lane "a" is running
	var overlap bool
	laneA := func(name string) lanedTool {
		return lanedTool{lane: "a", fakeTool: fakeTool{name: name, calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
			select {
			case inLane <- struct{}{}:
			default:
				overlap = true
			}
			<-inLane
			return chat.TextResult("ok"), nil
		}}}
	}
	// other waits for free, which runs on no lane: were they run one
	// after the other, other would wait forever.
	freeRan := make(chan struct{})
	free := fakeTool{name: "free", calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
		close(freeRan)
		return chat.TextResult("ok"), nil
	}}
	other := lanedTool{lane: "b", fakeTool: fakeTool{name: "other", calls: &called, mu: &mu, call: func(context.Context, json.RawMessage) (chat.Result, error) {
		select {
		case <-freeRan:
			return chat.TextResult("ok"), nil
		case <-time.After(time.Minute):
			return chat.ErrorResult("free never ran beside other"), nil
		}
	}}}
	tools := []chat.Tool{laneA("a1"), laneA("a2"), laneA("a3"), other, free}
	r, _, _ := testRunner(newToolset(nil, ToolPlan{}, nil), tools...)
	calls := []llm.ToolCall{{ID: "1", Name: "other"}, {ID: "2", Name: "a1"}, {ID: "3", Name: "a2"}, {ID: "4", Name: "free"}, {ID: "5", Name: "a3"}}
	for i, res := range r.run(t.Context(), calls) {
		if res.IsError || res.CallID != calls[i].ID {
			t.Errorf("call %s: %+v %q", calls[i].ID, res, llmtest.ResultText(res))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var lane []string
	for _, c := range called {
		if strings.HasPrefix(c, "a") {
			lane = append(lane, c)
		}
	}
	if !slices.Equal(lane, []string{"a1", "a2", "a3"}) || overlap {
		t.Errorf("lane a ran %v (overlapping: %v), want a1, a2, a3 one after another", lane, overlap)
	}
}

// The resource tools are no server's: a configured server whose entry's
// name is the resource tools' group ("MCP resources") does not make them
// ask for its approval (they did when the group was their server name,
// which Client.Server matched to the entry's label).
func TestResourceToolsNeverAsk(t *testing.T) {
	a := &approvals{decide: func(ApprovalRequest) (Approval, error) { return Denied, nil }}
	e := newEnv(t, callThenReport(mcpclient.ReadResourceTool, `{"server":"MCP_resources","uri":"`+fakemcp.ResourceNotes+`"}`),
		envOptions{modes: []string{fakemcp.ModeResources}, approve: a.approve, server: func(c *mcpconfig.ServerConfig) {
			c.Name, c.Label, c.Approval = "MCP_resources", mcpclient.ResourcesGroup, mcpconfig.ApprovalAlways
		}})
	e.deliver(chat.In(51), "read the notes")
	texts := e.chat.waitTexts(t, chat.In(51), 1)
	if reqs := a.all(); len(reqs) != 0 {
		t.Errorf("the resource tool asked for approval: %+v", reqs)
	}
	if !strings.Contains(texts[0], "Resource "+fakemcp.ResourceNotes) {
		t.Errorf("the answer: %q, want the notes read", texts[0])
	}
}
