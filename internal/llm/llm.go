// Package llm is the model port of volcanicbot and its two adapters:
// OpenAI-compatible chat completions and Anthropic messages. It knows
// nothing of MCP or Telegram: tools are names, descriptions and JSON
// schemas, passed to the provider verbatim.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Role is who wrote a message. Tool results travel in user messages (as
// Anthropic has them); the chat-completions adapter turns them into tool
// messages.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartKind is the kind of one part of a message.
type PartKind string

const (
	PartText       PartKind = "text"
	PartImage      PartKind = "image"
	PartToolCall   PartKind = "tool_call"   // assistant messages
	PartToolResult PartKind = "tool_result" // user messages
)

// Part is one piece of a message. Exactly the field matching Kind is set.
type Part struct {
	Kind       PartKind    `json:"kind"`
	Text       string      `json:"text,omitempty"`
	Image      *Image      `json:"image,omitempty"`
	ToolCall   *ToolCall   `json:"tool_call,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
}

// Image is an inline image.
type Image struct {
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"data,omitempty"`
	// Path, when set, names a file holding Data (the transcript stores
	// images beside it, not inline); adapters only read Data.
	Path string `json:"path,omitempty"`
}

// ToolCall is the model asking for a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult answers a ToolCall. Content holds text and image parts.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content []Part `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Tool is a tool offered to the model. Schema is sent verbatim.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Request is one model call.
type Request struct {
	// Model names the model to ask, of the adapter's provider and
	// endpoint (a chat's pick of LLM_MODELS); "": the adapter's own
	// (its options' Model).
	Model    string
	System   string
	Messages []Message
	Tools    []Tool
	// StableTools is how many of the first Tools stay the same, in the
	// same order, from one request of a conversation to the next; the
	// ones after them (tools loaded on demand) may change. An adapter
	// whose provider caches the prompt marks that prefix. 0: all of them.
	StableTools int
	MaxTokens   int // 0: the adapter's default
	// OnText, when set, makes the adapter stream the answer: it is called
	// with each piece of the answer's text as it arrives, in order, in
	// Complete's goroutine (keep it short: it holds up the stream). The
	// pieces joined are Response.Text. A failure after the first piece is
	// not retried (the caller has shown it); one before it is, as without
	// streaming. nil: one request, the whole answer at once.
	OnText func(text string)
}

// Usage is what a call cost. It means the same for every adapter:
// InputTokens counts every token of the prompt, the cached ones included
// (chat completions' prompt_tokens; Anthropic's input_tokens plus its cache
// reads and writes), so it is the size of the context the call used.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int // of InputTokens, read from the provider's prompt cache
	CacheWriteTokens int // of InputTokens, written to it
	// Estimated is how many of InputTokens and OutputTokens the adapter
	// counted itself, offline, because the provider's count never came:
	// the request ended early (see estimate.go). 0: the provider's count.
	Estimated int
}

// Normalised stop reasons. Anything else is the provider's own word
// (for example "content_filter", "refusal", "pause_turn").
const (
	StopEnd       = "end"        // the model finished its answer
	StopToolUse   = "tool_use"   // the model wants the tool calls run
	StopMaxTokens = "max_tokens" // the answer was cut at the token limit
)

// Response is the model's answer: text, tool calls, or both.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// StopReason is the provider's reason, normalised: StopEnd, StopToolUse,
	// StopMaxTokens, or the provider's own word. Tool calls always come
	// with StopToolUse, whatever the server said (Ollama says "stop").
	StopReason string
}

// Model is the port the agent loop calls.
type Model interface {
	// Complete makes one model request. When it fails, the Response
	// carries only Usage: what the request cost all the same — for one
	// the provider took and that ended early (stopped, timed out, a
	// stream broken off), an estimate of its prompt and of what was
	// streamed (Usage.Estimated); zero when the provider refused it or
	// never got it. Count it either way.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Error is a failed model call after the adapter's retries. UserMessage is
// short and safe to show in the chat; Error() carries the details for the
// operator's log.
type Error struct {
	Provider string
	Status   int // HTTP status; 0 when the request never got an answer
	Message  string
	Err      error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// UserMessage is what the chat is told.
func (e *Error) UserMessage() string {
	switch {
	case errors.Is(e.Err, context.Canceled):
		return "The request to the model was cancelled."
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "The model took too long to answer. Please try again."
	case e.Status == 401 || e.Status == 403:
		return "The model provider refused the API key. The operator needs to check it."
	case e.Status == 429:
		return "The model provider is rate-limiting us. Please try again in a minute."
	case e.Status >= 500:
		return "The model provider is having trouble right now. Please try again shortly."
	case e.Status == 400:
		return "The model provider rejected the request. Try /new to start a fresh conversation."
	case e.Status == 0:
		return "The model provider could not be reached. Please try again shortly."
	}
	return fmt.Sprintf("The model provider failed (HTTP %d).", e.Status)
}
