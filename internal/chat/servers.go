package chat

import (
	"encoding/json"
	"strconv"
	"time"
)

// What a chat is told of its MCP servers (/mcp and /mcp <name>): the MCP
// adapter fills these in, the session adds what the tools cost under its
// plan, and the bot writes them in words. The texts they hold (errors,
// stderr lines) may hold secrets: whoever shows them redacts them.

// MCPStatus is every configured MCP server as one chat sees it, in the
// configuration's order.
type MCPStatus struct {
	Servers []ServerStatus
	// OutOfMemory is set once the kernel's OOM killer ended a server
	// process; nil when it never did.
	OutOfMemory *OOMKills
}

// OOMKills is what the kernel's OOM killer did to the servers' processes.
type OOMKills struct {
	// Kills counts the processes it ended under the bot's memory limit.
	Kills int
	// Machine is set when the machine, not the bot's limit, ran out.
	Machine bool
	// Last is when it last did.
	Last time.Time
	// Servers are those whose processes it ended.
	Servers []string
}

// ServerState is where a server's process of one chat stands.
type ServerState int

const (
	ServerNotStarted ServerState = iota
	ServerStarting
	ServerRunning
	ServerExited       // it restarts on the next call
	ServerDisconnected // it reconnects on the next call
	ServerFailed
	ServerDisabled
	ServerClosed
	ServerWaiting // for a free slot (its ceiling of live processes)
)

// ServerStatus is one configured server as one chat sees it: /mcp's line
// of it, and the details of /mcp <name>.
type ServerStatus struct {
	Name    string // the internal name
	Display string // the name as the user reads it
	Ref     string // the name /mcp commands take
	// Label is the entry's own spelling of the name, when it is not a
	// valid name ("" otherwise).
	Label        string
	Enabled      bool
	DisabledHint string // why it is disabled, when the bot knows
	// Discovering is set while its first discovery runs and no catalogue
	// was kept from an earlier run.
	Discovering bool
	// Login is set when it needs a login (OAuth).
	Login *LoginNeeded
	// DiscoveryError is the last discovery's error ("": none).
	DiscoveryError string
	// State is the chat's process's; LastError is why it failed or
	// ended.
	State     ServerState
	LastError string
	// Offered are the tools the model is offered (the refused ones left
	// out), in catalogue order.
	Offered []CatalogTool
	// OfferedTokens is what Offered cost in each model request, counted
	// with the adapter's tokenizer.
	OfferedTokens int
	// Cost is what Offered cost under the session's plan (some may be
	// deferred); nil: OfferedTokens, none deferred.
	Cost *ToolCost
	// Refused says, a line each, why a tool was not offered (a name
	// clash).
	Refused []string
	// ScopeShort is set when calls were refused for a scope the login
	// lacks; Scope is the scope the server asked for.
	ScopeShort bool
	Scope      string
	// Live and Limit count its processes across chats and their ceiling
	// (0: none), Waiting the calls waiting for one.
	Live, Limit, Waiting int

	ServerDetails
}

// ServerDetails are what /mcp <name> adds to the server's line: its
// configuration, its process and its troubles.
type ServerDetails struct {
	Setup ServerSetup
	// Info is the server's self-description (name, version, protocol).
	Info ServerInfo
	// Resources is set when it offers resources.
	Resources *ResourceTools
	// Shared is its one process for every chat; nil for a server each
	// chat runs its own of.
	Shared *SharedProcess
	// PID and Memory (bytes, PSS with its children; 0: unknown) are the
	// chat's process's.
	PID    int
	Memory int64
	// Starts counts its processes started in this chat, Evictions those
	// stopped to free a slot for another chat.
	Starts, Evictions int
	// Asking are the offered tools whose calls wait for a user's yes.
	Asking []string
	// Hidden are the tools its configuration keeps from the model.
	Hidden []string
	// Warnings say what the catalogue left out.
	Warnings []string
	// Tail is the stderr tail of its process; LastExit how the last one
	// that ended on its own did, and ExitTail its stderr tail.
	Tail     []string
	LastExit string
	ExitTail []string
}

// ServerSetup is what the configuration says of a server: never a value
// of its environment or headers, only their names.
type ServerSetup struct {
	// Command is the unexpanded command line, quoted where needed; URL
	// the server's address. A shared server has both.
	Command string
	URL     string
	Shared  bool
	Headers []string // names, sorted
	Cwd     string
	Env     []string // names, sorted
	// Source is where it was configured.
	Source     string
	ToolPrefix string
	// Approval is its approval rule, with its lists.
	Approval    string
	AutoApprove []string
	AlwaysAsk   []string
}

// ServerInfo is a server's self-description from its handshake.
type ServerInfo struct {
	Name, Version, ProtocolVersion string
}

// ResourceTools are the tools the model lists and reads the servers'
// resources with.
type ResourceTools struct {
	List, Read string
}

// SharedProcess is the one process a shared server runs for every chat.
type SharedProcess struct {
	PID    int // 0: not running
	Users  int // the sessions on it
	Memory int64
	// Replaced says why it was last replaced ("": never), and when.
	Replaced   string
	ReplacedAt time.Time
}

// LoginNeeded is a server that needs a login.
type LoginNeeded struct {
	// Reason is why one that was logged in needs a login again.
	Reason string
	// Tools counts the tools kept from its last login.
	Tools int
}

// ToolCost is what a server's offered tools cost in each model request
// under the session's plan.
type ToolCost struct {
	// Always counts the tools in every request; AlwaysTokens is what
	// they cost.
	Always, AlwaysTokens int
	// Deferred counts the tools found with tool search; AllTokens is what
	// every offered tool would cost without it.
	Deferred, AllTokens int
}

// CatalogTool is one tool of a catalogue as the agent plans with it: what
// the model is told of it, what tool search ranks it by, and its origin,
// which the catalogue's owner binds to one chat's session of it (a chat's
// MCP session) as a Tool.
type CatalogTool struct {
	// Server is its server; "" for a tool that runs on no one server,
	// whose Set names its group (the resource tools).
	Server string
	Set    string
	// MCPName is the name its server knows it by; Name the one the
	// model calls it by.
	MCPName, Name string
	Description   string
	// InputSchema is the server's schema of the arguments, as the
	// catalogue keeps it (what its cost and its identity are counted
	// by); Schema is the schema the model gets.
	InputSchema, Schema json.RawMessage
	// Origin is the catalogue's own record of the tool, which only its
	// owner reads (to bind it to a chat); nil for an entry made by hand.
	Origin ToolOrigin
}

// Group names who offers the tool, as the model and the operator read
// it: its server, or its Set.
func (t CatalogTool) Group() string {
	if t.Set != "" {
		return t.Set
	}
	return t.Server
}

// ToolOrigin is a catalogue's own record of one of its tools.
type ToolOrigin interface {
	// CatalogTool is the entry of the tool.
	CatalogTool() CatalogTool
}

// UnknownServerError is a command that names no configured MCP server
// (/mcp <name>, /mcp restart <name>, /mcp login <name>). Configured are the
// servers there are, by the names users know them by; the bot tells the
// user (Error is the operator's text).
type UnknownServerError struct {
	Name       string
	Configured []string
}

func (e *UnknownServerError) Error() string { return "unknown MCP server " + strconv.Quote(e.Name) }
