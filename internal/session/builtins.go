package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// The session's built-in tools, as chat.Tools: send, read, memory
// (memory.go) and tool_search, and the answer to a name no tool has. A new built-in is one
// more type here (or in its own file) and one more entry in builtinTools:
// the model is offered, and the registry calls, what that list holds.

// builtinTools are the chat's own tools that m offers (m nil: every one,
// for their names), bound to s (nil: for their specs only); tool_search is
// the registry's (it exists only while tools are deferred). A built-in
// that needs something the bot may lack (a live view, a scheduler) is
// offered when m has it.
func builtinTools(m *Manager, s *session) []chat.Tool {
	tools := []chat.Tool{sendTool{s}, readTool{s}, memoryTool{s}, askUserTool{s}}
	if m == nil || m.handoffOffered() {
		tools = append(tools, browserHandoffTool{s})
	}
	if m == nil || m.sched != nil {
		tools = append(tools, scheduleTool{s: s})
	}
	return tools
}

// builtins are s's own tools (builtinTools).
func (s *session) builtins() []chat.Tool { return builtinTools(s.m, s) }

// BuiltinGroup is what the model and the operator read as the group of the
// built-ins that are deferred (chat.Deferrable) while tool search is on.
const BuiltinGroup = "built-in"

// BuiltinNames are the names of the chat's own tools, tool_search
// included: an MCP tool may not take one of them.
func BuiltinNames() []string {
	names := []string{ToolSearchName}
	for _, t := range builtinTools(nil, nil) {
		names = append(names, t.Spec().Name)
	}
	return names
}

// BuiltinCatalog is the catalogue's entries of every built-in that asks to
// be deferred (chat.Deferrable): with the MCP tools, tool search plans,
// lists, ranks and loads them (PlanTools). The others are always offered
// (builtinSpecs).
func BuiltinCatalog() []chat.CatalogTool { return builtinCatalog(builtinTools(nil, nil)) }

// builtinCatalog is the catalogue's entries of the tools that ask to be
// deferred.
func builtinCatalog(tools []chat.Tool) []chat.CatalogTool {
	var out []chat.CatalogTool
	for _, t := range tools {
		if !chat.Deferred(t) {
			continue
		}
		s := t.Spec()
		out = append(out, chat.CatalogTool{Set: BuiltinGroup, MCPName: s.Name, Name: s.Name,
			Description: s.Description, InputSchema: s.Schema, Schema: s.Schema})
	}
	return out
}

// sendTool is send (send.go): its calls keep their order.
type sendTool struct{ s *session }

func (sendTool) Spec() chat.Spec {
	return chat.Spec{Name: SendToolName, Description: sendDescription, Schema: sendSchema}
}

func (sendTool) Lane() string { return SendToolName }

func (sendTool) Check(args json.RawMessage) (json.RawMessage, error) {
	return checkWith(args, sendArguments)
}

func (t sendTool) Call(ctx context.Context, args json.RawMessage) (chat.Result, error) {
	return callWith(args, sendArguments, func(a sendArgs) (string, error) { return t.s.sendFile(ctx, a) }), nil
}

// readTool is read (read.go): it has no side effects, so its calls run
// concurrently with any other.
type readTool struct{ s *session }

func (readTool) Spec() chat.Spec {
	return chat.Spec{Name: ReadToolName, Description: readDescription, Schema: readSchema}
}

func (readTool) Check(args json.RawMessage) (json.RawMessage, error) {
	return checkWith(args, readArguments)
}

func (t readTool) Call(_ context.Context, args json.RawMessage) (chat.Result, error) {
	return callWith(args, readArguments, t.s.readFile), nil
}

// checkWith is the Check of a built-in whose arguments parse decodes
// (returning the problem for the model, or "").
func checkWith[A any](args json.RawMessage, parse func(json.RawMessage) (A, string)) (json.RawMessage, error) {
	if _, problem := parse(args); problem != "" {
		return nil, errors.New(problem)
	}
	return args, nil
}

// callWith is the Call of such a built-in: run with the decoded
// arguments, its text the result, its error an error result.
func callWith[A any](args json.RawMessage, parse func(json.RawMessage) (A, string), run func(A) (string, error)) chat.Result {
	a, problem := parse(args)
	if problem != "" {
		return chat.ErrorResult(problem)
	}
	text, err := run(a)
	if err != nil {
		return chat.ErrorResult(err.Error())
	}
	return chat.TextResult(text)
}

// searchTool is tool_search (toolsearch.go) over the registry's deferred
// tools. It never fails: an unreadable query is an empty one, whose answer
// lists the tools.
type searchTool struct{ r *registry }

func (searchTool) Spec() chat.Spec {
	return chat.Spec{Name: ToolSearchName, Description: toolSearchDescription, Schema: toolSearchSchema}
}

func (searchTool) Check(args json.RawMessage) (json.RawMessage, error) {
	obj, problem := callArguments(ToolSearchName, args)
	if problem != "" {
		return nil, nil
	}
	return obj, nil
}

func (t searchTool) Call(_ context.Context, args json.RawMessage) (chat.Result, error) {
	return chat.TextResult(t.r.tools.index.searchResultText(searchQuery(args), t.r.loaded)), nil
}

// unknownTool answers a call to a name no tool of the step has: an MCP
// tool its server no longer offers, one not discovered yet, or a name the
// model made up. The call is not made: its arguments are refused before
// anything shows.
type unknownTool struct {
	name  string
	tools *toolset
}

func (t unknownTool) Spec() chat.Spec { return chat.Spec{Name: t.name} }

func (t unknownTool) Check(json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New(t.answer())
}

func (t unknownTool) Call(context.Context, json.RawMessage) (chat.Result, error) {
	return chat.ErrorResult(t.answer()), nil
}

func (t unknownTool) answer() string {
	if server, gone := t.tools.gone[t.name]; gone {
		return fmt.Sprintf("%s is no longer offered: the %s MCP server's tool list changed, and it is not in your tool list any more", t.name, server)
	}
	msg := fmt.Sprintf("there is no tool named %q", t.name)
	if t.tools.index != nil {
		msg += "; " + ToolSearchName + " finds the tools there are"
	}
	if len(t.tools.discovering) > 0 {
		msg += fmt.Sprintf("; the tools of the MCP server %s are not known yet (it is still starting): "+
			"they are offered from the next step once they are", strings.Join(t.tools.discovering, ", "))
	}
	return msg
}
