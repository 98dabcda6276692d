package session

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

// Defaults for Options.
const (
	DefaultMaxSteps      = 40
	DefaultContextTokens = 100_000
	DefaultIdleRelease   = 10 * time.Minute
	DefaultModelTimeout  = 5 * time.Minute
	// DefaultApprovalTimeout is APPROVAL_TIMEOUT_SECONDS unset.
	DefaultApprovalTimeout = 5 * time.Minute
	// DefaultDiscoveryWait is the longest a turn waits for the MCP
	// servers' first discoveries (Options.DiscoveryWait).
	DefaultDiscoveryWait = 3 * time.Second
	// DefaultMaxTokensPerRun is SCHEDULE_MAX_TOKENS_PER_RUN unset.
	DefaultMaxTokensPerRun = 20_000
	// DefaultAnswerGrace is how long a ready answer may still take to go
	// out once the bot shuts down (Options.AnswerGrace): less than the
	// bot gives its sessions to end (8 s), within the 30 s compose.yaml
	// gives the container.
	DefaultAnswerGrace = 5 * time.Second
)

// ErrClosed is returned once the manager is shutting down.
var ErrClosed = errors.New("session manager closed")

// Options configure a Manager.
type Options struct {
	// DataDir is the root of all state; chat workspaces are
	// DataDir/chats/<chat id>/, the bot's private state of each chat
	// DataDir/private/<chat id>/, a forum topic's beside them with
	// "_t<topic id>" after the chat id (see chatdir).
	DataDir string
	Model   llm.Model // required
	// VoiceDefault is whether a chat that never sent /voice gets its
	// answers read aloud too (TTS_DEFAULT).
	VoiceDefault bool
	// ModelName is the model's name (the adapter's own), the default
	// model when Models is empty.
	ModelName string
	// Models are the models a chat may pick with /model, of Model's
	// provider and endpoint, the default first (LLM_MODELS); empty:
	// ModelName alone. A chat's requests name its model
	// (llm.Request.Model), and a sampling answer tells the server it.
	Models []string
	MCP    Catalogue // required
	// NewMCPSession makes a chat's MCP session, whose processes run in
	// workspace and keep their state in private (required; no I/O).
	NewMCPSession func(workspace, private string) (MCPSession, error)
	// Login starts an OAuth login to the server name (/mcp login);
	// redirect is where the browser comes back. Nil: no logins.
	Login func(ctx context.Context, name, redirect string) (*MCPLogin, error)
	Chat  Chat // required
	// Redactor replaces known secrets in tool results and answers.
	Redactor interface{ Redact(string) string }
	Logger   *slog.Logger
	// SystemPrompt replaces DefaultSystemPrompt when set.
	SystemPrompt string
	// MaxSteps caps model calls per turn (DefaultMaxSteps).
	MaxSteps int
	// ContextTokens bounds each request (DefaultContextTokens).
	ContextTokens int
	// NoSummaries turns summaries off: a conversation over ContextTokens
	// is trimmed (old tool output, then old turns left out of the
	// request) instead of its oldest turns being summarised (summary.go).
	NoSummaries bool
	// IdleRelease is how long a chat's goroutine and history stay in
	// memory after its last message (DefaultIdleRelease). MCP processes
	// have their own idle timeout.
	IdleRelease time.Duration
	// ModelTimeout bounds one model call, retries included
	// (DefaultModelTimeout).
	ModelTimeout time.Duration
	// ToolSearch is when MCP tools are offered on demand through
	// tool_search (ToolSearchAuto when empty).
	ToolSearch ToolSearch
	// CountTokens counts the tokens of a text as the model does (tool
	// search's threshold); about four bytes a token when nil.
	CountTokens func(string) int
	// ApprovalTimeout is how long a tool call waits for a user's
	// approval before it is denied (DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// Handoffs starts live views of a chat's browser tab: with it (and a
	// Chat that is a HandoffChat) browser_handoff is offered. Nil: not.
	Handoffs Handoffs
	// HandoffTimeout is how long a hand-off waits for Done
	// (DefaultHandoffTimeout).
	HandoffTimeout time.Duration
	// Allowance reserves what every model request (the chat's turns and
	// its servers' sampling) may cost before it is made, and is told what
	// each cost; nil allows all.
	Allowance Allowance
	// Now defaults to time.Now.
	Now func() time.Time
	// NoStream turns streamed answers off: the answer is sent when it is
	// complete, even to a chat whose activity can show it while it is
	// written (StreamingActivity).
	NoStream bool
	// DiscoveryWait is the longest a turn waits for an MCP server's first
	// discovery (DefaultDiscoveryWait): a server whose catalogue was kept
	// from an earlier run is offered at once with it, one still being
	// discovered after the wait offers its tools from the step after they
	// arrive.
	DiscoveryWait time.Duration
	// AnswerGrace is how long a turn's ready answer may still take to go
	// out once the manager closes (DefaultAnswerGrace); one Telegram has
	// not taken by then is sent at the next start.
	AnswerGrace time.Duration
	// DiskBudget is the most bytes of generated files a chat keeps
	// (DefaultDiskBudget when 0; see disk.go).
	DiskBudget int64
	// Documents reads the documents users send (PDF, Word, spreadsheets,
	// web pages, e-books) into text the model sees (documents.go); nil:
	// they are only saved.
	Documents DocumentReader
	// DiskFree is the room left on the file system of dir, in bytes, for
	// a file streamed into a workspace (uploadstream.go); the file system's
	// own count (statfs) when nil. Tests give less.
	DiskFree func(dir string) (int64, error)
	// DiskCheckEvery is how often the chats with a live server are
	// measured (DefaultDiskCheckEvery when 0; see diskwatch.go).
	DiskCheckEvery time.Duration
	// DefaultZone is the time zone of a chat that set none with /tz (TZ);
	// "": UTC.
	DefaultZone string
	// MaxTokensPerRun caps what one scheduled run may spend, its model
	// requests' input and output tokens (SCHEDULE_MAX_TOKENS_PER_RUN;
	// DefaultMaxTokensPerRun when 0).
	MaxTokensPerRun int
}

// Manager maps places (chats, forum topics) to sessions. Each session has
// one goroutine while it has work, which owns the place's conversation;
// everything else talks to it through its mailbox.
type Manager struct {
	o        Options
	dirs     chatdir.Layout
	logger   *slog.Logger
	sections []PromptSection
	ctx      context.Context // cancelled by Close: ends every turn
	cancel   context.CancelFunc

	// mu guards sessions and closed, nothing else: each session's state
	// has its session's lock.
	mu       sync.Mutex
	sessions map[chat.Place]*session
	closed   bool
	watching bool           // the disk watcher runs (diskwatch.go)
	wg       sync.WaitGroup // the session goroutines and the disk watcher

	refusalsMu sync.Mutex
	refusals   map[string]bool

	grants grants     // every chat's "always in this chat" (grants.go)
	picks  modelPicks // every chat's pick of the models (model.go)
	memory memories   // every chat's notes (memorystore.go)

	// catalogMu guards catalog, the plan and the index of the last
	// catalogue a turn saw (see toolset).
	catalogMu sync.Mutex
	catalog   *toolCatalog
	seed      maphash.Seed

	// sched makes and lists the chats' scheduled tasks (SetScheduler,
	// before the first message); nil: no schedule tool. ownZones is the
	// zone cache without one.
	sched    Scheduler
	ownZones schedule.Zones

	// wrapTranscript, when set (by a test, before the first message),
	// wraps every transcript file the sessions write: a full disk.
	wrapTranscript func(transcriptFile) transcriptFile
}

// NewManager returns a Manager. It does no I/O: a chat's workspace is made
// and its transcript read when its first message arrives.
func NewManager(o Options) *Manager {
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.ContextTokens <= 0 {
		o.ContextTokens = DefaultContextTokens
	}
	if o.IdleRelease <= 0 {
		o.IdleRelease = DefaultIdleRelease
	}
	if o.ModelTimeout <= 0 {
		o.ModelTimeout = DefaultModelTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Allowance == nil {
		o.Allowance = unlimited{}
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.DiscoveryWait <= 0 {
		o.DiscoveryWait = DefaultDiscoveryWait
	}
	if o.AnswerGrace <= 0 {
		o.AnswerGrace = DefaultAnswerGrace
	}
	if o.SystemPrompt == "" {
		o.SystemPrompt = DefaultSystemPrompt
	}
	if o.Redactor == nil {
		o.Redactor = identity{}
	}
	if o.ToolSearch == "" {
		o.ToolSearch = ToolSearchAuto
	}
	if o.CountTokens == nil {
		o.CountTokens = func(s string) int { return (len(s) + 3) / 4 }
	}
	if o.DiskBudget <= 0 {
		o.DiskBudget = DefaultDiskBudget
	}
	if o.MaxTokensPerRun <= 0 {
		o.MaxTokensPerRun = DefaultMaxTokensPerRun
	}
	if o.DiskCheckEvery <= 0 {
		o.DiskCheckEvery = DefaultDiskCheckEvery
	}
	if o.DiskFree == nil {
		o.DiskFree = diskFree
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		o:        o,
		dirs:     chatdir.New(o.DataDir),
		logger:   logger.With("component", "session"),
		ctx:      ctx,
		cancel:   cancel,
		sessions: map[chat.Place]*session{},
		refusals: map[string]bool{},
		seed:     maphash.MakeSeed(),
	}
	for _, s := range o.MCP.Servers() {
		if s.PromptSection != "" {
			m.sections = append(m.sections, PromptSection{Server: s.Name, Text: s.PromptSection})
		}
	}
	return m
}

// Workspace is chat's folder: its files, what its servers see.
func (m *Manager) Workspace(place chat.Place) string { return m.dirs.Workspace(place) }

// Private is the bot's private folder of chat, beside its workspace: the
// transcript, its images, the mark of a running turn, the browser's state.
func (m *Manager) Private(place chat.Place) string { return m.dirs.Private(place) }

// get returns chat's session, creating it (without I/O) if needed.
func (m *Manager) get(place chat.Place) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.sessions[place]
	if !ok {
		ws, private := m.Workspace(place), m.Private(place)
		s = &session{id: place, m: m, workspace: ws, private: private, wake: make(chan struct{}, 1),
			sampling: make(chan struct{}, maxSampling), disk: m.newDisk(ws, private)}
		m.sessions[place] = s
		m.startWatchLocked()
	}
	return s, nil
}

// Message is a user's message for a chat.
type Message struct {
	Text string
	// Files were sent with the text: they are saved under uploads/ in the
	// workspace when the turn starts, and images are also shown to the
	// model.
	Files []Attachment
	// Taken, when set, is called once, from the chat's goroutine, when the
	// caller need no longer keep the message to deliver it again after a
	// restart: its turn started and the transcript holds it, the chat was
	// told it could not be handled (a full disk, a panic), or /new dropped
	// it. A message still waiting when the manager closes, or whose turn the
	// close cut off before the transcript held it, is never taken.
	Taken func()
	// From is the user who sent it (0: unknown): the one whose approval
	// the turn's tool calls ask for.
	From int64
}

// Deliver queues a user's message for chat. It never blocks on a turn:
// messages that arrive during one wait for it, in order.
func (m *Manager) Deliver(place chat.Place, msg Message) error {
	s, err := m.get(place)
	if err != nil {
		return err
	}
	_, err = s.enqueue(input{kind: inputMessage, text: msg.Text, files: msg.Files, taken: msg.Taken, from: msg.From})
	return err
}

// Resume tells each chat whose last turn a restart cut off (the bot was
// killed, or shut down, while it worked on a message) that it was, once:
// "I was restarted while working on your last message; say \"continue\" to
// let me go on." — without a model call. A turn leaves a mark in its
// chat's private folder while it runs; Resume finds the marks (one stat per
// chat, no transcript is read here) and queues the notice on each such
// chat, whose goroutine sends it when the transcript indeed ends without
// an answer (the user's message, or tool calls and results). Call it once
// at start, before the messages kept from the last run are delivered
// again, so that the notice comes first. It returns how many chats were
// marked.
func (m *Manager) Resume() (int, error) {
	ids, err := m.dirs.PrivateChats()
	if err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	n := 0
	for _, id := range ids {
		if _, err := os.Lstat(turnMarkPath(m.Private(id))); err != nil {
			continue
		}
		s, err := m.get(id)
		if err != nil {
			return n, err
		}
		if _, err := s.enqueue(input{kind: inputResume}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Stop cancels chat's running turn (the MCP server is told) and reports
// whether one was running. Queued messages are kept.
func (m *Manager) Stop(place chat.Place) bool {
	m.mu.Lock()
	s, ok := m.sessions[place]
	m.mu.Unlock()
	return ok && s.cancelTurn()
}

// End ends chat's session for now — a forum topic that was deleted or
// closed: its running turn is cancelled, messages still waiting for it
// are dropped, its MCP processes are stopped (its browser context
// closes) and its conversation leaves memory. Its transcript, workspace
// and private folder stay: a later message starts it again where it was.
// It does not wait, and reports whether the chat had a session to end
// (false when none ran since the bot started, or the manager is closing).
func (m *Manager) End(place chat.Place) bool {
	m.mu.Lock()
	s, ok := m.sessions[place]
	m.mu.Unlock()
	if !ok {
		return false
	}
	n, err := s.enqueue(input{kind: inputEnd})
	if n > 0 {
		m.logger.Info("session ended: dropped waiting messages", "chat", place, "messages", n)
	}
	return err == nil
}

// Reset starts a new conversation in chat (/new): the running turn is
// cancelled, messages still waiting for it are dropped (they belong to the
// conversation the user is leaving), the transcript is archived and the
// chat's MCP processes are stopped (the next browser call starts a fresh
// browser). It returns when done.
func (m *Manager) Reset(ctx context.Context, place chat.Place) error {
	s, err := m.get(place)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	n, err := s.enqueue(input{kind: inputReset, done: done})
	if err != nil {
		return err
	}
	if n > 0 {
		m.logger.Info("new conversation: dropped waiting messages", "chat", place, "messages", n)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MCP returns chat's MCP session (created, without I/O, if needed): /mcp
// reads it and /mcp restart acts on it.
func (m *Manager) MCP(place chat.Place) (MCPSession, error) {
	s, err := m.get(place)
	if err != nil {
		return nil, err
	}
	return s.mcpSession()
}

// Close ends every turn, waits for the session goroutines (their
// transcripts are flushed and closed), and stops every MCP process.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	sessions := slices.Collect(maps.Values(m.sessions))
	m.mu.Unlock()
	// After this no goroutine starts (enqueue counts one in m.wg under the
	// same session lock), so the Wait below waits for all of them.
	for _, s := range sessions {
		s.shut()
	}
	m.cancel()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("session goroutines did not end: %w", ctx.Err())
	}
	m.o.MCP.Close()
	return err
}

// toolset resolves the tools for a turn: the built-ins and every
// discovered MCP tool, some of them (and the deferrable built-ins)
// deferred (ToolPlan). It waits at most
// wait for the servers' first discoveries (see Catalogue.CatalogTools).
// Refusals are logged once each.
func (m *Manager) toolset(ctx context.Context, wait time.Duration) *toolset {
	tools, refusals := m.o.MCP.CatalogTools(ctx, wait)
	m.refusalsMu.Lock()
	for _, s := range refusals {
		if !m.refusals[s] {
			m.refusals[s] = true
			m.logger.Warn("MCP tool refused", "refusal", s)
		}
	}
	m.refusalsMu.Unlock()
	tools = slices.Concat(tools, builtinCatalog(builtinTools(m, nil)))
	cat := m.planFor(tools)
	ts := newToolset(tools, cat.plan, cat.index)
	ts.key = cat.key
	ts.discovering = m.o.MCP.Discovering()
	return ts
}

// toolCatalog is the plan and the search index of one catalogue.
type toolCatalog struct {
	key   uint64
	plan  ToolPlan
	index *toolIndex
}

// planFor returns the plan of tools, made once per catalogue: counting
// the tokens of every schema and indexing the deferred tools is done again
// only when a tool changed.
func (m *Manager) planFor(tools []chat.CatalogTool) *toolCatalog {
	var h maphash.Hash
	h.SetSeed(m.seed)
	for _, t := range tools {
		for _, s := range []string{t.Group(), t.MCPName, t.Name, t.Description, string(t.InputSchema)} {
			h.WriteString(s)
			h.WriteByte(0)
		}
	}
	key := h.Sum64()
	m.catalogMu.Lock()
	defer m.catalogMu.Unlock()
	if c := m.catalog; c != nil && c.key == key {
		return c
	}
	plan := m.ToolPlan(tools)
	var deferred []chat.CatalogTool
	for _, t := range tools {
		if plan.Deferred[t.Name] {
			deferred = append(deferred, t)
		}
	}
	c := &toolCatalog{key: key, plan: plan}
	if len(deferred) > 0 {
		c.index = newToolIndex(deferred)
	}
	if old := m.catalog; old == nil || old.plan.Search != plan.Search {
		m.logger.Info("tool list", "tool_search", plan.Search, "mode", string(plan.Mode), "tools", len(tools)+len(builtinSpecs(plan.builtins, plan.Search)),
			"deferred", len(plan.Deferred), "full_tokens", plan.FullTokens, "offered_tokens", plan.OfferedTokens, "threshold", plan.Threshold)
	}
	m.catalog = c
	return c
}

// ToolPlan is how tools (a resolved catalogue) are offered to the model
// under the manager's options.
func (m *Manager) ToolPlan(tools []chat.CatalogTool) ToolPlan {
	return PlanTools(PlanOptions{Mode: m.o.ToolSearch, ContextTokens: m.o.ContextTokens, CountTokens: m.o.CountTokens,
		Builtins: builtinTools(m, nil)},
		tools, m.o.MCP.Servers())
}

// ensureWorkspace makes the chat's workspace (0700).
func (m *Manager) ensureWorkspace(dir string) error {
	if err := ensureDir(dir); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// ensureDir makes dir and its parents (0700). The common case, a parent
// that exists, costs one mkdir.
func ensureDir(dir string) error {
	if err := mkdir(dir); err == nil {
		return nil
	}
	return os.MkdirAll(dir, 0o700)
}

type identity struct{}

func (identity) Redact(s string) string { return s }

// MCPStatus is /mcp for chat: every server's state, tools and errors,
// with what each server's tools cost under the plan. Its texts are not
// redacted. It costs no model call.
func (m *Manager) MCPStatus(ctx context.Context, place chat.Place) (chat.MCPStatus, error) {
	ms, err := m.MCP(place)
	if err != nil {
		return chat.MCPStatus{}, err
	}
	plan := m.offeredPlan()
	st := ms.MCPStatus()
	for i := range st.Servers {
		st.Servers[i].Cost = m.toolCost(plan, st.Servers[i].Offered)
	}
	return st, nil
}

// MCPServer is /mcp <name> for chat: MCPStatus's of the server, with its
// configuration, process and troubles; an error written for the user when
// no server has that name.
func (m *Manager) MCPServer(ctx context.Context, place chat.Place, name string) (chat.ServerStatus, error) {
	ms, err := m.MCP(place)
	if err != nil {
		return chat.ServerStatus{}, err
	}
	plan := m.offeredPlan()
	st, err := ms.ServerStatus(name)
	if err != nil {
		return chat.ServerStatus{}, err
	}
	st.Cost = m.toolCost(plan, st.Offered)
	return st, nil
}

// offeredPlan is the plan of the tools offered now (see Offered).
func (m *Manager) offeredPlan() ToolPlan {
	return m.ToolPlan(slices.Concat(m.o.MCP.OfferedTools(), builtinCatalog(builtinTools(m, nil))))
}

// toolCost is what a server's offered tools cost each request under
// plan: how many are in every request and at what cost, how many are
// deferred (found with tool_search), and what all would cost without it.
func (m *Manager) toolCost(plan ToolPlan, offered []chat.CatalogTool) *chat.ToolCost {
	var always []chat.CatalogTool
	for _, t := range offered {
		if !plan.Deferred[t.Name] {
			always = append(always, t)
		}
	}
	c := &chat.ToolCost{Always: len(always), AlwaysTokens: mcpToolTokens(m.o.CountTokens, always),
		Deferred: len(offered) - len(always)}
	if c.Deferred > 0 {
		c.AllTokens = mcpToolTokens(m.o.CountTokens, offered)
	}
	return c
}

// MCPRestart is /mcp restart <name>: chat's process of that server is
// stopped, and the next call starts a fresh one.
func (m *Manager) MCPRestart(place chat.Place, name string) error {
	ms, err := m.MCP(place)
	if err != nil {
		return err
	}
	return ms.Restart(name)
}

// LoginRedirect is where a login from a chat (/mcp login) has the
// authorization server send the browser back: nothing need listen there,
// the admin pastes the address the browser ended on into the chat. It is
// the one `volcanicbot login` uses, so one client registration serves
// both.
const LoginRedirect = "http://127.0.0.1:8976/callback"

// MCPLogin is an OAuth login to a server under way (see Manager.MCPLogin).
type MCPLogin struct {
	// URL is the address the admin opens to log in.
	URL string
	// State is what the redirect back carries (its state parameter).
	State  string
	finish func(ctx context.Context, answer string) error
}

// NewMCPLogin is a login at url, whose redirect carries state, that
// finish completes (for other implementations of the bot's sessions, such
// as tests').
func NewMCPLogin(url, state string, finish func(ctx context.Context, answer string) error) *MCPLogin {
	return &MCPLogin{URL: url, State: state, finish: finish}
}

// Finish completes the login with the address the browser ended on (or
// the code it shows): the token is saved, and the server discovered again.
func (l *MCPLogin) Finish(ctx context.Context, answer string) error { return l.finish(ctx, answer) }

// MCPLogin starts an OAuth login to the server name, at a URL (/mcp login
// <name>); redirect is where the browser comes back (empty:
// LoginRedirect, for the address pasted back).
func (m *Manager) MCPLogin(ctx context.Context, name, redirect string) (*MCPLogin, error) {
	if redirect == "" {
		redirect = LoginRedirect
	}
	if m.o.Login == nil {
		return nil, errors.New("logins are not set up")
	}
	return m.o.Login(ctx, name, redirect)
}

// ServerNames lists the configured MCP servers that are enabled, for /help.
func (m *Manager) ServerNames() []string {
	var names []string
	for _, s := range m.o.MCP.Servers() {
		if s.Enabled {
			names = append(names, s.Display())
		}
	}
	return names
}
