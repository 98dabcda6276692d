package chat

import (
	"context"
	"encoding/json"
)

// Tool is a tool the model can call.
type Tool interface {
	// Spec is what the model is told of the tool.
	Spec() Spec
	// Call runs the tool with args, a JSON object (checked: see
	// Checker). Whatever went wrong that the model can act on — a
	// failure of the tool, a refusal, a timeout — is an error Result;
	// the error is non-nil only when the call could not end on its own:
	// ctx ended (the turn was stopped) or the tool's owner was closed.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Spec is what the model is told of a tool.
type Spec struct {
	// Name is the name the model calls the tool by, unique among the
	// tools offered together.
	Name        string
	Description string
	// Schema is the JSON schema of the arguments, as the model gets it
	// (verbatim).
	Schema json.RawMessage
}

// Checker is a Tool that checks its own arguments. They are checked before
// anything of the call shows (an approval question, the chat's progress
// line): a call with arguments the tool refuses is answered with the
// error's text and not made. A Tool that is not a Checker gets the
// session's rule: the arguments must be one JSON object.
type Checker interface {
	Tool
	// Check returns args as Call is to get them, or the error the model
	// is told (its text says what to send instead).
	Check(args json.RawMessage) (json.RawMessage, error)
}

// Sequenced is a Tool whose calls must not overlap some others: the calls
// of one model step on the same lane run one after another, in the order
// the model made them. A Tool that is not Sequenced, or whose Lane is "",
// runs concurrently with every other call. Lanes are compared as strings,
// so each owner names its own: the MCP adapter's start with "mcp:".
type Sequenced interface {
	Tool
	Lane() string
}

// Guarded is a Tool whose calls a person may have to approve first: an MCP
// server's own tool, under its server's approval rule. A Tool that is not
// Guarded never asks (the built-ins, the resource tools, the tool that
// only says how to log in).
type Guarded interface {
	Tool
	Guard() Guard
}

// Guard is what an approval of a Guarded tool's call goes by.
type Guard struct {
	// Server is the MCP server whose approval rule applies.
	Server string
	// Tool is the tool's name on that server: what "always in this chat"
	// is kept by, and what the person is shown.
	Tool string
	// Annotations are the tool's hints (approval "writes" lets a tool
	// that says it only reads run without asking).
	Annotations Annotations
}

// Deferrable is a Tool the model needs only now and then (a scheduled
// task, handing the browser over). While tool search is on, it is offered
// as a deferred MCP tool is: listed by name in the system prompt and loaded
// with its schema by a search or a call by name; else it is offered with
// the others.
type Deferrable interface {
	Tool
	Deferred() bool
}

// Deferred says whether t is a Deferrable that asks to be deferred.
func Deferred(t Tool) bool {
	d, ok := t.(Deferrable)
	return ok && d.Deferred()
}
