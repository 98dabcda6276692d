// Package mcpclient runs MCP servers for volcanicbot: configuration, the
// process-wide tool catalogue, per-session server connections, tool naming,
// result mapping and the /mcp status text. It knows nothing of Telegram, of
// the LLM or of presets.
package mcpclient

import (
	"encoding/json"
	"log/slog"
	"time"
)

// Defaults applied when a server entry leaves a field out.
const (
	DefaultStartupTimeout = 60 * time.Second
	DefaultCallTimeout    = 120 * time.Second
	DefaultIdleTimeout    = 1800 * time.Second
	DefaultStderrLevel    = slog.LevelWarn
)

// Source names where a server entry came from. Sources are merged in the
// order config → preset → settings; the first source wins a name.
type Source string

const (
	// SourceConfig is the config file's mcp.servers and MCP__SERVERS__… variables.
	SourceConfig Source = "config"
	// SourcePreset is a preset such as playwright.
	SourcePreset Source = "preset"
	// SourceSettings is mcpServers in $VOLCANIC_AGENT_DIR/settings.json.
	SourceSettings Source = "settings"
)

// ServerConfig is one MCP server entry after parsing and defaulting.
// Command, Args, Cwd and Env values are unexpanded: ${workspace} and
// ${env:NAME} are expanded when a process is spawned (see Expand).
type ServerConfig struct {
	Name   string
	Source Source
	// Origin is a human description of the source, such as a file path
	// ("settings /root/.volcanic/agent/settings.json"), used in messages.
	Origin string

	Command string
	Args    []string
	// Env is applied over the filtered host environment. A nil value
	// removes the variable (JSON null).
	Env map[string]*string
	// Cwd is the working directory of a session process; empty means
	// ${workspace}.
	Cwd string

	// URL is set instead of Command for a server reached over streamable
	// HTTP; Headers go with every request. Values may use ${env:NAME}.
	URL     string
	Headers map[string]string

	ToolPrefix      string
	Enabled         bool
	Parallel        bool
	StartupTimeout  time.Duration
	CallTimeout     time.Duration
	IdleTimeout     time.Duration // 0 = never stop an idle process
	StderrLevel     slog.Level
	PromptSection   string
	ProtocolVersion string // optional pin; empty = the fast default

	// DisabledHint is shown by /mcp for a disabled entry, e.g.
	// "set PLAYWRIGHT_ENABLED=true".
	DisabledHint string
}

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

// Environment builds the environment of a server process: the filtered host
// environment with the server's explicit entries applied over it, and host
// lookups for ${env:NAME}. redact.EnvFilter satisfies it.
type Environment interface {
	// Apply returns the filtered host environment with explicit applied
	// over it ("NAME=value" entries); a nil value removes the variable.
	Apply(explicit map[string]*string) []string
	// Lookup reads a host variable, for ${env:NAME}.
	Lookup(name string) (string, bool)
}

// Redactor replaces known secret values. redact.Registry satisfies it.
type Redactor interface {
	Redact(s string) string
}
