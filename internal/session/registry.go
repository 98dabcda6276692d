package session

import (
	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// registry is what a turn's calls run: every tool of the toolset by the
// name the model calls it — the built-ins, and the MCP tools (deferred
// ones included) bound to the chat's MCP session. A call runs the tool its
// name finds; nothing dispatches on names.
type registry struct {
	tools  *toolset
	byName map[string]chat.Tool
	// loaded are the deferred tools loaded in the current step (the
	// step sets it), which tool_search marks as such.
	loaded map[string]bool
}

// newRegistry binds ts's MCP tools to mcp and adds builtins, which win a
// name (mcpclient refuses MCP tools that take a built-in's), and
// tool_search while some tools are deferred.
func newRegistry(ts *toolset, mcp MCPSession, builtins []chat.Tool) *registry {
	r := &registry{tools: ts, byName: make(map[string]chat.Tool, len(ts.mcp)+len(builtins)+1)}
	for _, b := range builtins {
		r.byName[b.Spec().Name] = b
	}
	for name, t := range ts.mcp {
		if _, builtin := r.byName[name]; !builtin { // a deferrable built-in's entry
			r.byName[name] = mcp.Bind(t)
		}
	}
	if ts.index != nil {
		r.byName[ToolSearchName] = searchTool{r}
	}
	return r
}

// lookup returns the tool named name, or the tool that answers that there
// is none.
func (r *registry) lookup(name string) chat.Tool {
	if t, ok := r.byName[name]; ok {
		return t
	}
	return unknownTool{name: name, tools: r.tools}
}

// lane is t's lane (chat.Sequenced), "" when its calls may run
// concurrently with any other.
func lane(t chat.Tool) string {
	if s, ok := t.(chat.Sequenced); ok {
		return s.Lane()
	}
	return ""
}
