package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// The catalogue's tools as the chat's tools: Session.Tool binds a Tool to
// one chat's session, as a chat.Tool of the type its kind says.
//
//   - a server's own tool (serverTool): called on the server's process;
//     Guarded by the server's approval rule; its calls queue on the
//     server's lane unless the server is parallel;
//   - the login tool (loginTool): says how to log in, never calls the
//     server, never asks for approval; on its server's lane;
//   - the resource tools (resourceTool): list or read the resources of
//     the servers that offer them; never ask; on a lane of their own.

// toolKind is how a Tool that is not a server's own is called and bound.
type toolKind interface {
	call(ctx context.Context, s *Session, t Tool, args json.RawMessage) (Result, error)
	bind(s *Session, t Tool) chat.Tool
	group(t Tool) string
}

// CatalogTool is t as the agent plans with it (chat.ToolOrigin): its
// origin is t, which Bind reads back.
func (t Tool) CatalogTool() chat.CatalogTool {
	e := chat.CatalogTool{Server: t.Server, MCPName: t.MCPName, Name: t.Name, Description: t.Description,
		InputSchema: t.InputSchema, Schema: t.ModelSchema(), Origin: t}
	if g := t.Group(); g != t.Server {
		e.Set = g
	}
	return e
}

// ModelSchema is the schema the model gets of t (ModelSchema of its
// InputSchema), made once when the catalogue read the tool.
func (t Tool) ModelSchema() json.RawMessage {
	if t.modelSchema != nil {
		return t.modelSchema
	}
	return ModelSchema(t.InputSchema)
}

// catalogTools are tools as catalogue entries.
func catalogTools(tools []Tool) []chat.CatalogTool {
	out := make([]chat.CatalogTool, len(tools))
	for i, t := range tools {
		out[i] = t.CatalogTool()
	}
	return out
}

// Bind returns the entry e as the chat's tool: its calls run in this
// session. An entry whose origin is not one of this package's tools (one
// made by hand) is a server's own tool.
func (s *Session) Bind(e chat.CatalogTool) chat.Tool {
	t, ok := e.Origin.(Tool)
	if !ok {
		t = Tool{Server: e.Server, MCPName: e.MCPName, Name: e.Name, Description: e.Description, InputSchema: e.InputSchema}
	}
	return s.Tool(t)
}

// Tool returns t as the chat's tool: its calls run in this session.
func (s *Session) Tool(t Tool) chat.Tool {
	if t.kind != nil {
		return t.kind.bind(s, t)
	}
	return serverTool{boundTool{s, t}}
}

// serverLane is the lane of the calls to server's tools: "" (concurrent)
// when its entry says parallel.
func (s *Session) serverLane(server string) string {
	if conn, ok := s.conns[server]; ok && conn.cfg.Parallel {
		return ""
	}
	return "mcp:" + server
}

// boundTool is a Tool bound to a session: its spec and its call.
type boundTool struct {
	s *Session
	t Tool
}

func (b boundTool) Spec() chat.Spec {
	return chat.Spec{Name: b.t.Name, Description: b.t.Description, Schema: b.t.ModelSchema()}
}

func (b boundTool) Call(ctx context.Context, args json.RawMessage) (chat.Result, error) {
	res, err := b.s.Call(ctx, b.t, args)
	if err != nil {
		return chat.Result{}, err
	}
	return res.Chat(), nil
}

// serverTool is a server's own tool.
type serverTool struct{ boundTool }

func (t serverTool) Lane() string { return t.s.serverLane(t.t.Server) }

func (t serverTool) Guard() chat.Guard {
	return chat.Guard{Server: t.t.Server, Tool: t.t.MCPName, Annotations: t.t.Annotations}
}

// loginKind is the tool of a server that needs a login it never had
// (loginCatalog): a call says how to log in.
type loginKind struct{}

func (loginKind) call(_ context.Context, s *Session, t Tool, _ json.RawMessage) (Result, error) {
	return s.client.loginResult(t), nil
}

func (loginKind) bind(s *Session, t Tool) chat.Tool { return loginTool{boundTool{s, t}} }
func (loginKind) group(t Tool) string               { return t.Server }

// loginTool is the login tool of one chat: not Guarded, as it only says
// how to log in.
type loginTool struct{ boundTool }

func (t loginTool) Lane() string { return t.s.serverLane(t.t.Server) }

// resourceKind is the resource tools' (resources.go).
type resourceKind struct{}

func (resourceKind) call(ctx context.Context, s *Session, t Tool, args json.RawMessage) (Result, error) {
	return s.resources(ctx, t, args)
}

func (resourceKind) bind(s *Session, t Tool) chat.Tool { return resourceTool{boundTool{s, t}} }
func (resourceKind) group(Tool) string                 { return ResourcesGroup }

// resourceTool is a resource tool of one chat: its calls queue on one lane
// (they go to several servers at once); not Guarded, as they only read.
type resourceTool struct{ boundTool }

func (resourceTool) Lane() string { return "mcp:" + ResourcesGroup }

// Chat is r as the chat's result (sharing its parts).
func (r Result) Chat() chat.Result { return chat.Result{Parts: r.Content, IsError: r.IsError} }
