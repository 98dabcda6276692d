package session

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// toolset is the tools of one turn: the built-ins and the MCP tools.
type toolset struct {
	specs    []llm.Tool
	mcp      map[string]mcpclient.Tool // by exposed name
	parallel map[string]bool           // server → may run calls concurrently
	active   map[string]bool           // servers with at least one tool offered
}

func newToolset(mcpTools []mcpclient.Tool, servers []mcpconfig.ServerConfig) *toolset {
	ts := &toolset{
		mcp:      make(map[string]mcpclient.Tool, len(mcpTools)),
		parallel: map[string]bool{},
		active:   map[string]bool{},
	}
	ts.specs = append(ts.specs, llm.Tool{Name: SendToolName, Description: sendDescription, Schema: sendSchema})
	for _, s := range servers {
		ts.parallel[s.Name] = s.Parallel
	}
	for _, t := range mcpTools {
		ts.mcp[t.Name] = t
		ts.active[t.Server] = true
		ts.specs = append(ts.specs, llm.Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	return ts
}

// toolRunner executes one assistant message's tool calls.
type toolRunner struct {
	tools    *toolset
	mcp      *mcpclient.Session
	send     func(ctx context.Context, args sendArgs) (string, error)
	redact   func(string) string
	activity Activity
}

// run executes calls and returns their results in call order. Calls to one
// non-parallel server run one after another in order; calls to different
// servers, and to parallel servers, run concurrently. send calls keep their
// order. When ctx ends, the calls not yet answered get a "cancelled" result
// so every call has its result in the transcript.
//
// A panic in a call is re-raised in the caller's goroutine once every call
// has ended (the session's recover then ends the turn), with the stack
// where it happened.
func (r *toolRunner) run(ctx context.Context, calls []llm.ToolCall) []llm.ToolResult {
	results := make([]llm.ToolResult, len(calls))
	queues := map[string][]int{} // sequential group → call indexes
	var order []string
	var wg sync.WaitGroup
	var panicked atomic.Pointer[toolPanic]
	one := func(i int) {
		defer func() {
			if v := recover(); v != nil {
				panicked.CompareAndSwap(nil, &toolPanic{call: calls[i].Name, value: v, stack: debug.Stack()})
			}
		}()
		results[i] = r.one(ctx, calls[i])
	}
	for i, c := range calls {
		group := r.group(c.Name)
		if group == "" { // parallel: its own goroutine
			wg.Go(func() { one(i) })
			continue
		}
		if _, ok := queues[group]; !ok {
			order = append(order, group)
		}
		queues[group] = append(queues[group], i)
	}
	for _, g := range order {
		idx := queues[g]
		wg.Go(func() {
			for _, i := range idx {
				one(i)
			}
		})
	}
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic(p)
	}
	return results
}

// group names the sequential group of a call: "" for calls that may run
// concurrently.
func (r *toolRunner) group(name string) string {
	if name == SendToolName {
		return "\x00send"
	}
	t, ok := r.tools.mcp[name]
	if !ok {
		return "\x00unknown"
	}
	if r.tools.parallel[t.Server] {
		return ""
	}
	return t.Server
}

func (r *toolRunner) one(ctx context.Context, call llm.ToolCall) llm.ToolResult {
	res := llm.ToolResult{CallID: call.ID, Name: call.Name}
	if err := ctx.Err(); err != nil {
		return errorResult(res, "cancelled: the user stopped this turn before the call ran")
	}
	if call.Name == SendToolName {
		args, problem := sendArguments(call.Arguments)
		if problem != "" {
			return errorResult(res, problem)
		}
		r.started(call)
		text, err := r.send(ctx, args)
		if err != nil {
			return errorResult(res, r.redact(err.Error()))
		}
		res.Content = []llm.Part{{Kind: llm.PartText, Text: text}}
		return res
	}
	t, ok := r.tools.mcp[call.Name]
	if !ok {
		return errorResult(res, fmt.Sprintf("there is no tool named %q", call.Name))
	}
	args, problem := callArguments(call.Name, call.Arguments)
	if problem != "" {
		return errorResult(res, problem)
	}
	r.started(call)
	out, err := r.mcp.Call(ctx, t, args)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult(res, "cancelled: the user stopped this turn")
		}
		return errorResult(res, r.redact(err.Error()))
	}
	res.IsError = out.IsError
	for _, c := range out.Content {
		switch c.Type {
		case mcpclient.ContentText:
			res.Content = append(res.Content, llm.Part{Kind: llm.PartText, Text: r.redact(c.Text)})
		case mcpclient.ContentImage:
			res.Content = append(res.Content, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: c.MIMEType, Data: c.Data}})
		}
	}
	if len(res.Content) == 0 {
		res.Content = []llm.Part{{Kind: llm.PartText, Text: "(no output)"}}
	}
	return res
}

func errorResult(res llm.ToolResult, text string) llm.ToolResult {
	res.IsError = true
	res.Content = []llm.Part{{Kind: llm.PartText, Text: text}}
	return res
}

// started shows call in the turn's activity, as it is made.
func (r *toolRunner) started(call llm.ToolCall) {
	if r.activity != nil {
		r.activity.ToolCall(call.Name, call.Arguments)
	}
}
