package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// Chat is what a session needs from the chat it serves. The bot implements
// it; tests use a fake.
type Chat interface {
	// SendText sends the model's Markdown answer (already redacted). The
	// implementation renders and splits it as the chat needs.
	SendText(ctx context.Context, place chat.Place, markdown string) error
	// SendFile uploads a file of the workspace, already opened and
	// checked by the session: images (by content) as photos where the chat
	// allows, anything else as a document. It reads file.Content, at most
	// file.Size bytes, and never the file by its name.
	SendFile(ctx context.Context, place chat.Place, file OutgoingFile, caption string) error
	// StartActivity shows that a turn is running (typing, a progress
	// message) until the returned Activity is done.
	StartActivity(ctx context.Context, place chat.Place) Activity
}

// ResumingChat is a Chat that can send what is left of a text: the parts
// from the index from on, as SendText split it (the first reached the chat
// before a shutdown: chat.PartlySentError). The bot implements it; a Chat
// without it is sent the whole text again.
type ResumingChat interface {
	SendTextFrom(ctx context.Context, place chat.Place, markdown string, from int) error
}

// VoiceChat is a Chat that can read an answer aloud (the bot, with a
// text-to-speech endpoint): the session has it send the answers of the
// chats that asked (/voice on) after their text.
type VoiceChat interface {
	SendVoiceAnswer(ctx context.Context, place chat.Place, markdown string) error
}

// Activity is the visible progress of one turn.
type Activity interface {
	// ToolCall reports a tool call as it starts.
	ToolCall(name string, args json.RawMessage)
	// Done ends the activity (removes or finalises the progress message).
	Done()
}

// Approver is what a Chat offers when it can ask its users whether a tool
// call may run (the bot does, with buttons). A call that needs approval in
// a chat without it is not run.
type Approver interface {
	// Approve asks chat about req and returns the decision: Approved,
	// ApprovedAlways or Denied. An error means nobody decided: wrapping
	// ErrNoApproval when nobody answered within req.Timeout, the
	// context's error when the turn ended, anything else when the
	// question could not be asked. The call is then not run.
	Approve(ctx context.Context, place chat.Place, req ApprovalRequest) (Approval, error)
}

// ApprovalRequest is a tool call waiting for a user's yes.
type ApprovalRequest struct {
	// UserID sent the message that started the turn (0: unknown): in a
	// group, the one (with the admins) who may decide.
	UserID int64
	Server string
	// Tool is the tool's MCP name; Exposed the name the model called.
	Tool, Exposed string
	// Annotations are the tool's hints: what it says of itself.
	Annotations chat.Annotations
	// Arguments are the call's arguments, redacted: a JSON object.
	Arguments json.RawMessage
	// OfferAlways is whether "always in this chat" may be granted (not
	// for an alwaysAsk tool).
	OfferAlways bool
	// Timeout is how long to wait for an answer.
	Timeout time.Duration
}

// Approval is a user's decision on a tool call.
type Approval int

const (
	Denied Approval = iota
	Approved
	// ApprovedAlways approves this call and every later call of the same
	// tool in this chat.
	ApprovedAlways
)

// ErrNoApproval is what an Approver's error wraps when nobody answered in
// time: the call is denied.
var ErrNoApproval = errors.New("nobody answered")

// Elicitor is what a Chat offers when it can put a server's questions
// (MCP elicitation) to its users. Only the MCP sessions of a chat that
// offers it declare the elicitation capability to their servers.
type Elicitor interface {
	// Elicit asks chat what req's server wants to know and returns the
	// answer: accept with the content (each answer checked against its
	// field), decline or cancel. It returns cancel when ctx ends: its
	// context.Cause says why — context.DeadlineExceeded when nobody
	// answered in time, context.Canceled when the turn ended (/stop, /new,
	// a shutdown). What the user answers goes
	// to the server only: never to the model, the transcript or the log.
	Elicit(ctx context.Context, place chat.Place, req ElicitRequest) (chat.ElicitResult, error)
}

// ElicitRequest is a server's question to the chat, asked during a turn.
type ElicitRequest struct {
	// UserID sent the message that started the turn (0: unknown): in a
	// group, the one (with the admins) who may answer.
	UserID int64
	chat.Elicitation
}

// Allowance is the daily spend allowance (spend.Ledger implements it):
// every model request made for a chat reserves what it may cost before it
// is made, and says what it cost after.
type Allowance interface {
	// Reserve holds an estimate of the most a request to model ("": the
	// default) can cost — prompt tokens and an answer of up to answer
	// tokens, and their price — of the allowances of chat and user (0:
	// none known), waiting
	// while the rest is held by requests in flight; err is ctx's error
	// when it ended first. spent is to be called once, with the request's
	// Usage — also when it failed (llm.Model: a failed request may have
	// cost something). spent is nil when an allowance is used up; notice
	// is then what to tell the chat, once: "" when it was told already.
	Reserve(ctx context.Context, chatID, userID int64, model string, prompt, answer int64) (spent func(llm.Usage), notice string, err error)
}

// unlimited is the Allowance when none is set: it allows everything.
type unlimited struct{}

func (unlimited) Reserve(context.Context, int64, int64, string, int64, int64) (func(llm.Usage), string, error) {
	return func(llm.Usage) {}, "", nil
}

// StreamingActivity is an Activity that shows the answer while the model
// writes it. When the chat's activity is one (and Options.NoStream is
// false), the session streams each model step's text to it.
type StreamingActivity interface {
	Activity
	// Stream shows text, the answer so far of the current model step,
	// redacted. It returns at once; the chat shows the newest text it
	// was given, as often as it may. Stream("") takes down what was
	// shown: the step's text was not the answer (tool calls followed).
	// What was shown last stays when the turn ends without Answer (it
	// was stopped, or the model failed).
	Stream(text string)
	// Answer delivers the turn's final answer (redacted Markdown) as
	// Chat.SendText does, in place of what was streamed. It returns when
	// it was sent.
	Answer(ctx context.Context, markdown string) error
}

// Catalogue is what the sessions need of the MCP servers, whichever chat
// uses them (*mcpclient.Client satisfies it): their configuration, the
// tools they offer and when that changes.
type Catalogue interface {
	// Servers are the configured servers, in the configuration's order;
	// Server finds one by its name or its label.
	Servers() []mcpconfig.ServerConfig
	Server(name string) (mcpconfig.ServerConfig, bool)
	// CatalogTools is the tools offered for a turn, waiting at most wait
	// for the servers' first discoveries, and why the refused ones are.
	CatalogTools(ctx context.Context, wait time.Duration) ([]chat.CatalogTool, []string)
	// OfferedTools is the tools offered now, without waiting (for /mcp).
	OfferedTools() []chat.CatalogTool
	// Discovering names the servers whose first discovery still runs.
	Discovering() []string
	// CatalogVersion changes whenever a server's tools do.
	CatalogVersion() uint64
	// Close stops every server process.
	Close()
}

// MCPSession is one chat's side of the MCP servers (*mcpclient.Session
// satisfies it): its processes, the catalogue's tools bound to them, and
// where they stand. Nothing starts until it is used.
type MCPSession interface {
	// Bind is the catalogue's tool t as the chat's: its calls run in this
	// session.
	Bind(t chat.CatalogTool) chat.Tool
	// BeginTurn holds what the turn uses (the browser) until end is
	// called.
	BeginTurn() (end func())
	// ToolsChanged waits for the refresh of the servers that said their
	// tools changed, and reports whether one did.
	ToolsChanged(ctx context.Context) bool
	// Prewarm starts server's process ahead of its first call.
	Prewarm(server string)
	// Restart stops name's process: the next call starts a fresh one.
	Restart(name string) error
	// Stop stops every process of the chat.
	Stop()
	// Running names the servers whose process runs; IdleSince reports
	// whether name's was not called since t; StopIdle stops it, saying
	// why, unless it is in use.
	Running() []string
	IdleSince(name string, t time.Time) bool
	StopIdle(name, why string) bool
	// OnQueue tells f when a call waits for a free process of a server.
	OnQueue(f func(server string, ahead int))
	// SetSampler and SetElicitor set who answers the servers' sampling
	// requests and questions.
	SetSampler(s chat.Sampler)
	SetElicitor(e chat.Elicitor)
	// MCPStatus and ServerStatus are what /mcp and /mcp <name> tell.
	MCPStatus() chat.MCPStatus
	ServerStatus(name string) (chat.ServerStatus, error)
}
