package mcpclient

import (
	"encoding/json"
	"fmt"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Catalog is what one discovery learned about a server.
type Catalog struct {
	Server string
	// Label is the server's name as its entry gave it, when that is not
	// a valid server name (mcpconfig.ServerConfig.Label); for messages.
	Label      string
	ServerInfo ServerInfo
	Tools      []Tool
	// Warnings say what the catalogue left out (tools over the limits).
	Warnings []string
	// Hidden are the MCP names of the server's tools its configuration
	// keeps from the model (disabledTools).
	Hidden []string
}

// Limits of a catalogue: every tool offered costs its schema in every model
// request, so a server cannot make requests unusable.
const (
	MaxToolsPerServer = 512
	MaxSchemaBytes    = 64 << 10
	MaxDescription    = 8 << 10
)

// ServerInfo is the server's self-description from the handshake.
type ServerInfo struct {
	Name            string
	Version         string
	ProtocolVersion string
	Instructions    string
	// Resources is set when the server offers resources (its
	// capabilities): the model gets the resource tools (resources.go).
	Resources bool
}

// Tool is one MCP tool as the agent sees it.
type Tool struct {
	Server      string
	MCPName     string // the name the server is called with
	Name        string // the exposed, sanitised, prefixed name
	Description string
	// InputSchema is the server's inputSchema verbatim (a missing or
	// non-object schema becomes {"type":"object"}); the model gets
	// ModelSchema of it.
	InputSchema json.RawMessage
	// ParamHeaders are the parameters the server wants mirrored into HTTP
	// headers (x-mcp-header, protocol 2026-07-28); nil for most tools.
	ParamHeaders []ParamHeader
	// Annotations are the hints the server gave in tools/list.
	Annotations chat.Annotations
	// modelSchema is ModelSchema(InputSchema), made when the catalogue
	// read the tool; nil for the tools this package makes itself.
	modelSchema json.RawMessage
	// kind is how the tool is called when it is not the server's own
	// (nil): the resource tools, the login tool (see chattool.go).
	kind toolKind
	// own marks the bot's own call (CallOwn): its result is neither
	// inlined nor bounded for a model.
	own bool
}

// Group names who offers the tool, as the model and the operator read it:
// its server, or ResourcesGroup for the resource tools, which run on no
// one server (Server is "" for them).
func (t Tool) Group() string {
	if t.kind != nil {
		return t.kind.group(t)
	}
	return t.Server
}

// Result is a tool result mapped for the agent (spec §7): its parts are
// the chat's (Chat).
type Result struct {
	Content   []chat.Part
	IsError   bool
	Truncated bool
	Images    int
	Server    string
	Tool      string
}

// Text joins the text parts of r, for logs and tests.
func (r Result) Text() string {
	var n int
	for _, c := range r.Content {
		if c.Kind == chat.TextPart {
			n += len(c.Text) + 1
		}
	}
	b := make([]byte, 0, n)
	for _, c := range r.Content {
		if c.Kind != chat.TextPart {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, c.Text...)
	}
	return string(b)
}

// ErrorResult is a single-text error result. The text is capped at
// MaxErrorBytes (a server's error message, or the stderr of its exit, can
// be of any size); redact it before, so no secret is cut in two.
func ErrorResult(server, tool, text string) Result {
	return Result{Content: []chat.Part{{Kind: chat.TextPart, Text: chat.CapText(text, MaxErrorBytes)}}, IsError: true,
		Server: server, Tool: tool}
}

// MaxErrorBytes caps the text of an error result.
const MaxErrorBytes = 8 << 10

// Redactor replaces known secret values. redact.Registry satisfies it.
type Redactor interface {
	Redact(s string) string
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
