package mcpclient

import (
	"encoding/json"
)

// Catalog is what one discovery learned about a server.
type Catalog struct {
	Server     string
	ServerInfo ServerInfo
	Tools      []Tool
}

// ServerInfo is the server's self-description from the handshake.
type ServerInfo struct {
	Name            string
	Version         string
	ProtocolVersion string
	Instructions    string
}

// Tool is one MCP tool as the agent sees it.
type Tool struct {
	Server      string
	MCPName     string // the name the server is called with
	Name        string // the exposed, sanitised, prefixed name
	Description string
	// InputSchema is the server's inputSchema verbatim (a missing or
	// non-object schema becomes {"type":"object"}; a top-level $schema is
	// dropped).
	InputSchema json.RawMessage
}

// ContentType is the kind of one part of a tool result.
type ContentType string

const (
	ContentText  ContentType = "text"
	ContentImage ContentType = "image"
)

// Content is one part of a mapped tool result.
type Content struct {
	Type     ContentType
	Text     string // ContentText
	Data     []byte // ContentImage, decoded
	MIMEType string // ContentImage
}

// Result is a tool result mapped for the agent (spec §7).
type Result struct {
	Content   []Content
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
		if c.Type == ContentText {
			n += len(c.Text) + 1
		}
	}
	b := make([]byte, 0, n)
	for _, c := range r.Content {
		if c.Type != ContentText {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, c.Text...)
	}
	return string(b)
}

// ErrorResult is a single-text error result.
func ErrorResult(server, tool, text string) Result {
	return Result{Content: []Content{{Type: ContentText, Text: text}}, IsError: true, Server: server, Tool: tool}
}

// Redactor replaces known secret values. redact.Registry satisfies it.
type Redactor interface {
	Redact(s string) string
}
