package session

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// toolset is the tools of one turn: the built-ins, the MCP tools offered
// in every request, and the deferred ones (see toolsearch.go).
type toolset struct {
	// stable is the start of every request's tool list, in this order:
	// the built-ins, then the MCP tools that are not deferred. Loaded
	// tools come after it.
	stable []llm.Tool
	// mcp holds every tool of the catalogue, deferred ones included, by
	// exposed name: the MCP tools and the deferrable built-ins
	// (BuiltinCatalog). A call to any of them runs.
	mcp      map[string]chat.CatalogTool
	deferred map[string]bool
	index    *toolIndex      // over the deferred tools; nil when none is
	active   map[string]bool // servers with at least one tool offered or deferred
	// section is the system prompt's list of the deferred tools.
	section string
	// gone maps the exposed names of the MCP tools the chat was offered
	// and its servers no longer offer (their tool lists changed) to their
	// servers: a call to one gets that reason.
	gone map[string]string
	// key tells the MCP tools apart: equal keys, the same tools.
	key uint64
	// discovering are the servers whose tools were not known yet (their
	// first discovery still ran): a call to a tool the model expects from
	// one is told to try again.
	discovering []string
}

// newToolset makes the turn's toolset under plan; index ranks the
// deferred tools (nil: it is built here).
func newToolset(mcpTools []chat.CatalogTool, plan ToolPlan, index *toolIndex) *toolset {
	ts := &toolset{
		mcp:      make(map[string]chat.CatalogTool, len(mcpTools)),
		deferred: plan.Deferred,
		active:   map[string]bool{},
	}
	ts.stable = builtinSpecs(plan.builtins, plan.Search)
	var deferred []chat.CatalogTool
	for _, t := range mcpTools {
		ts.mcp[t.Name] = t
		if t.Server != "" {
			ts.active[t.Server] = true
		}
		if ts.deferred[t.Name] {
			deferred = append(deferred, t)
			continue
		}
		ts.stable = append(ts.stable, llm.Tool{Name: t.Name, Description: t.Description, Schema: t.Schema})
	}
	if len(deferred) > 0 {
		if index == nil {
			index = newToolIndex(deferred)
		}
		ts.index = index
		ts.section = deferredSection(deferred)
	}
	return ts
}

// loaded returns the deferred tools that history loads, in the order they
// were first loaded: the matches of its tool_search calls and the deferred
// tools it called, in the current turn and the loadTurns turns before it.
func (ts *toolset) loaded(history []llm.Message) []chat.CatalogTool {
	if ts.index == nil {
		return nil
	}
	start, turns := len(history), 0
	for start > 0 && turns <= loadTurns {
		start--
		if agent.StartsTurn(history[start]) {
			turns++
		}
	}
	var out []chat.CatalogTool
	seen := map[string]bool{}
	add := func(t chat.CatalogTool) {
		if ts.deferred[t.Name] && !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	for _, m := range history[start:] {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, p := range m.Parts {
			c := p.ToolCall
			switch {
			case c == nil:
			case c.Name == ToolSearchName:
				for _, t := range ts.index.search(searchQuery(c.Arguments)) {
					add(t)
				}
			default:
				if t, ok := ts.mcp[c.Name]; ok {
					add(t)
				}
			}
		}
	}
	return out
}

// specs is a request's tool list: the stable part, then loaded.
func (ts *toolset) specs(loaded []chat.CatalogTool) []llm.Tool {
	if len(loaded) == 0 {
		return ts.stable
	}
	out := make([]llm.Tool, len(ts.stable), len(ts.stable)+len(loaded))
	copy(out, ts.stable)
	for _, t := range loaded {
		out = append(out, llm.Tool{Name: t.Name, Description: t.Description, Schema: t.Schema})
	}
	return out
}

// toolRunner executes one assistant message's tool calls.
type toolRunner struct {
	tools    *registry
	redact   func(string) string
	activity Activity
	// approve says whether a call of a Guarded tool (named name) may run,
	// asking the chat when its server wants that; when not, why (the
	// call's result).
	approve func(ctx context.Context, t chat.Guarded, name string, args json.RawMessage) (bool, string)
}

// run executes calls and returns their results in call order. Calls on one
// lane (chat.Sequenced: a non-parallel server's, send's) run one after
// another in order; calls on different lanes, and calls of tools without
// one, run concurrently. When ctx ends, the calls not yet answered get a
// "cancelled" result so every call has its result in the transcript.
//
// A panic in a call is re-raised in the caller's goroutine once every call
// has ended (the session's recover then ends the turn), with the stack
// where it happened.
func (r *toolRunner) run(ctx context.Context, calls []llm.ToolCall) []llm.ToolResult {
	results := make([]llm.ToolResult, len(calls))
	tools := make([]chat.Tool, len(calls))
	queues := map[string][]int{} // lane → call indexes
	var order []string
	var wg sync.WaitGroup
	var panicked atomic.Pointer[toolPanic]
	one := func(i int) {
		defer func() {
			if v := recover(); v != nil {
				panicked.CompareAndSwap(nil, &toolPanic{call: calls[i].Name, value: v, stack: debug.Stack()})
			}
		}()
		results[i] = r.one(ctx, calls[i], tools[i])
	}
	for i, c := range calls {
		tools[i] = r.tools.lookup(c.Name)
		l := lane(tools[i])
		if l == "" { // concurrent: its own goroutine
			wg.Go(func() { one(i) })
			continue
		}
		if _, ok := queues[l]; !ok {
			order = append(order, l)
		}
		queues[l] = append(queues[l], i)
	}
	for _, l := range order {
		idx := queues[l]
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

// one makes call of t: its arguments are checked (by t when it is a
// chat.Checker, else they must be one JSON object), then approved when t
// is Guarded, then the chat is shown the call and t runs. What t answers
// is redacted.
func (r *toolRunner) one(ctx context.Context, call llm.ToolCall, t chat.Tool) llm.ToolResult {
	res := llm.ToolResult{CallID: call.ID, Name: call.Name}
	if err := ctx.Err(); err != nil {
		return errorResult(res, "cancelled: the user stopped this turn before the call ran")
	}
	var args json.RawMessage
	if c, ok := t.(chat.Checker); ok {
		var err error
		if args, err = c.Check(call.Arguments); err != nil {
			return errorResult(res, err.Error())
		}
	} else {
		var problem string
		if args, problem = callArguments(call.Name, call.Arguments); problem != "" {
			return errorResult(res, problem)
		}
	}
	if g, ok := t.(chat.Guarded); ok && r.approve != nil {
		if ok, why := r.approve(ctx, g, call.Name, args); !ok {
			return errorResult(res, why)
		}
	}
	r.started(call)
	out, err := t.Call(ctx, args)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult(res, "cancelled: the user stopped this turn")
		}
		return errorResult(res, r.redact(err.Error()))
	}
	res.IsError = out.IsError
	for _, p := range out.Parts {
		switch p.Kind {
		case chat.TextPart:
			res.Content = append(res.Content, llm.Part{Kind: llm.PartText, Text: r.redact(p.Text)})
		case chat.ImagePart:
			res.Content = append(res.Content, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: p.MIMEType, Data: p.Data}})
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
