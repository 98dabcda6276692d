package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// Options configure a Client. Servers must already be merged and validated,
// in source order.
type Options struct {
	Servers  []mcpconfig.ServerConfig
	Env      mcpconfig.Environment // required
	Redactor Redactor
	Logger   *slog.Logger
	// Builtins are the names of the host's built-in tools (such as send):
	// an MCP tool exposed under one of them is refused.
	Builtins []string
	// ClientName and ClientVersion are sent in the handshake.
	ClientName, ClientVersion string
	// Owner marks every process (see ReapOrphans); empty: no mark.
	Owner string
	// Tracker follows every server's whole process tree; nil: its
	// process groups only.
	Tracker *Tracker
	// FailureCooldown is how long a failed discovery is remembered
	// (DefaultFailureCooldown when 0).
	FailureCooldown time.Duration
	// Now is the clock of the cooldown (time.Now when nil; tests move it).
	Now func() time.Time
	// MaxResultTokens caps what the model gets of one tool result
	// (DefaultMaxResultTokens when 0); past it the result is saved in the
	// workspace (see ResultsDir).
	MaxResultTokens int
	// CountTokens counts the tokens of a text as the model will; about
	// four bytes a token when nil.
	CountTokens func(string) int
	// Observer is told what the servers do (metrics); nil: nobody.
	Observer Observer
	// OOM is the counter of the kernel's OOM kills under the bot's memory
	// limit (FindOOMCounter) that WatchMemory and the servers' exits
	// read; nil: not watched.
	OOM *OOMCounter
	// AuthDir holds the OAuth state (tokens, registrations) of the
	// servers at a URL, a 0600 file each; empty: kept in memory.
	AuthDir string
	// MaxMessageBytes is the largest message a server may send, on stdio
	// or in an answer at a URL (stdio.DefaultMaxMessageBytes, 64 MB, when
	// 0): a longer one fails its call, and the server is stopped or the
	// connection reopened.
	MaxMessageBytes int
	// CatalogDir keeps each server's last tool list (a 0600 file each):
	// after a restart its tools are offered at once while it is
	// discovered again (ToolsWithin), and a server that needs a login
	// again keeps offering them. Empty: kept in memory.
	CatalogDir string
	// PingAfter and PingTimeout watch a Shared server while a call is in
	// flight (DefaultPingAfter, DefaultPingTimeout when 0): it is pinged
	// after PingAfter, and again as often, and replaced for every chat
	// when a ping is not answered within PingTimeout.
	PingAfter, PingTimeout time.Duration
	// HoldIdle is how long a running turn keeps a process under a
	// ceiling (maxLive) it has called without calling it again
	// (DefaultHoldIdle when 0): until then another chat waits for it
	// rather than take it (Session.BeginTurn).
	HoldIdle time.Duration
}

// Client is the process-wide MCP side of the bot: the configured servers,
// their shared catalogues and every chat's connections.
type Client struct {
	servers  []mcpconfig.ServerConfig
	sp       *spawner
	auth     *authStore // sp's
	cache    *catalogCache
	builtins []string
	limiters map[string]*limiter // by server name: the ceilings (maxLive)

	maxResultTokens        int
	countTokens            func(string) int
	observer               Observer
	oom                    *oomWatch // nil: no counter
	pingAfter, pingTimeout time.Duration
	holdIdle               time.Duration
	// holdNow is the clock of the turns' holds (time.Now when nil; a test
	// moves it to let a hold lapse).
	holdNow func() time.Time

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// New returns a Client. It does no I/O: catalogues are discovered on first
// use, processes start on the first call.
func New(o Options) *Client {
	if o.PingAfter <= 0 {
		o.PingAfter = DefaultPingAfter
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = DefaultPingTimeout
	}
	sp := newSpawner(o)
	limiters := map[string]*limiter{}
	for _, s := range o.Servers {
		if s.MaxLive > 0 {
			limiters[s.Name] = newLimiter(s.MaxLive)
		}
	}
	if o.MaxResultTokens <= 0 {
		o.MaxResultTokens = DefaultMaxResultTokens
	}
	if o.CountTokens == nil {
		o.CountTokens = estimateTokens
	}
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	var oom *oomWatch
	if o.OOM != nil {
		now := o.Now
		if now == nil {
			now = time.Now
		}
		oom = &oomWatch{counter: *o.OOM, logger: sp.logger, now: now}
		sp.oom = oom
	}
	if o.HoldIdle <= 0 {
		o.HoldIdle = DefaultHoldIdle
	}
	return &Client{
		oom:             oom,
		servers:         o.Servers,
		sp:              sp,
		auth:            sp.auth,
		cache:           newCatalogCache(sp, newCatalogStore(o.CatalogDir, sp.redactor), o.FailureCooldown, o.Now),
		builtins:        o.Builtins,
		limiters:        limiters,
		maxResultTokens: o.MaxResultTokens,
		countTokens:     o.CountTokens,
		observer:        o.Observer,
		pingAfter:       o.PingAfter,
		pingTimeout:     o.PingTimeout,
		holdIdle:        o.HoldIdle,
		sessions:        map[*Session]struct{}{},
	}
}

// Usage is a server's live processes across every chat, its ceiling
// (maxLive; 0: none) and the chats waiting for a slot.
func (c *Client) Usage(name string) (live, limit, waiting int) {
	lim := c.limiters[name]
	if lim == nil {
		return 0, 0, 0
	}
	live, waiting = lim.usage()
	return live, lim.limit, waiting
}

// Servers returns the configured servers in source order, disabled ones
// included.
func (c *Client) Servers() []mcpconfig.ServerConfig { return c.servers }

// Server returns the server named name (names compare ordinally): its
// internal name, or the name its entry gave it (Label).
func (c *Client) Server(name string) (mcpconfig.ServerConfig, bool) {
	for _, s := range c.servers {
		if s.Name == name {
			return s, true
		}
	}
	for _, s := range c.servers {
		if s.Matches(name) {
			return s, true
		}
	}
	return mcpconfig.ServerConfig{}, false
}

// ServerCatalog is one server's discovery outcome.
type ServerCatalog struct {
	Config  mcpconfig.ServerConfig
	Catalog Catalog
	Err     error // the discovery failure; nil when disabled or discovered
	// Discovering is set when the server's first discovery is still
	// running (only from Lookup, which does not wait).
	Discovering bool
}

// Discover returns every server's catalogue (disabled servers with neither
// catalogue nor error), discovering the enabled ones concurrently. It waits
// for a server's first discovery (bounded by its startup timeout), never
// for a retry after a failure: then it returns the failure before it.
func (c *Client) Discover(ctx context.Context) []ServerCatalog {
	out := make([]ServerCatalog, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		out[i].Config = s
		if !s.Enabled {
			continue
		}
		wg.Go(func() {
			out[i].Catalog, out[i].Err = c.cache.get(ctx, s)
		})
	}
	wg.Wait()
	return out
}

// Lookup is Discover without waiting: a server whose first discovery runs
// is returned with the catalogue kept from an earlier run (see
// Options.CatalogDir), or with Discovering set when there is none. /mcp
// uses it, so that it answers at once whatever the servers do.
func (c *Client) Lookup() []ServerCatalog { return c.lookupWithin(context.Background(), 0) }

// lookupWithin is Lookup waiting up to wait, all servers at once, for the
// first discoveries of the servers without a kept catalogue.
func (c *Client) lookupWithin(ctx context.Context, wait time.Duration) []ServerCatalog {
	out := make([]ServerCatalog, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		out[i].Config = s
		if !s.Enabled {
			continue
		}
		if wait <= 0 {
			out[i].Catalog, out[i].Err, out[i].Discovering = c.cache.lookup(s)
			continue
		}
		wg.Go(func() { out[i].Catalog, out[i].Err, out[i].Discovering = c.cache.within(ctx, s, wait) })
	}
	wg.Wait()
	return out
}

// ToolsWithin is Tools for a turn, which must not wait long: a server's
// first discovery is waited for at most wait (all at once), and not at all
// for a server whose catalogue was kept from an earlier run (its kept
// tools are offered meanwhile). A server still being discovered then
// offers no tools yet: its tools come with the next step whose
// CatalogVersion differs.
func (c *Client) ToolsWithin(ctx context.Context, wait time.Duration) ([]Tool, []Refusal) {
	return c.resolve(c.lookupWithin(ctx, wait))
}

// CatalogTools is ToolsWithin as catalogue entries, with each refusal
// said in words (for the log).
func (c *Client) CatalogTools(ctx context.Context, wait time.Duration) ([]chat.CatalogTool, []string) {
	tools, refusals := c.ToolsWithin(ctx, wait)
	why := make([]string, len(refusals))
	for i, r := range refusals {
		why[i] = r.String()
	}
	return catalogTools(tools), why
}

// OfferedTools is Offered's tools as catalogue entries.
func (c *Client) OfferedTools() []chat.CatalogTool {
	tools, _ := c.Offered()
	return catalogTools(tools)
}

// Discovering names the servers whose first discovery still runs, with no
// catalogue kept from an earlier run (see Lookup).
func (c *Client) Discovering() []string {
	var out []string
	for _, sc := range c.Lookup() {
		if sc.Discovering {
			out = append(out, sc.Config.Name)
		}
	}
	return out
}

// CatalogVersion changes whenever a server's catalogue does (a discovery
// or a refresh ended): tools resolved before it may be out of date.
func (c *Client) CatalogVersion() uint64 { return c.cache.version.Load() }

// Tools returns the tools of every discovered server with names resolved
// across servers and built-ins (first server in source order wins), and the
// refusals. It waits as Discover does. It logs nothing: callers report
// refusals as they see fit.
func (c *Client) Tools(ctx context.Context) ([]Tool, []Refusal) {
	return c.resolve(c.Discover(ctx))
}

// Offered is Tools without waiting: the tools of the servers discovered
// so far (see Lookup).
func (c *Client) Offered() ([]Tool, []Refusal) { return c.resolve(c.Lookup()) }

// resolve is the tools and refusals of the discovered catalogues.
func (c *Client) resolve(cats []ServerCatalog) ([]Tool, []Refusal) {
	var discovered []Catalog
	for _, sc := range cats {
		if !sc.Config.Enabled || sc.Discovering {
			continue
		}
		_, login := needsLogin(sc.Err)
		switch {
		case sc.Err == nil, login && len(sc.Catalog.Tools) > 0:
			cat := sc.Catalog
			cat.Label = sc.Config.Label
			discovered = append(discovered, cat) // needing a login: the tools it had, which say so when called
		case login:
			discovered = append(discovered, loginCatalog(sc.Config))
		}
	}
	return ResolveTools(discovered, c.builtins, nil)
}

// NewSession returns the MCP side of one chat, whose processes run in
// workspace; private is the bot's own folder of the chat, beside it
// (chatdir), where the servers' state is kept (the shared browser's) —
// "": none is kept. Nothing starts until the first call.
func (c *Client) NewSession(workspace, private string) (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	s := &Session{client: c, workspace: workspace, private: private, conns: make(map[string]*connection, len(c.servers))}
	for _, cfg := range c.servers {
		s.conns[cfg.Name] = newConnection(cfg, workspace, private, c, s)
	}
	c.sessions[s] = struct{}{}
	return s, nil
}

// Close closes every chat's connections, concurrently, refuses new ones,
// and ends the discoveries under way. It returns when every process is
// gone and every goroutine of the client has ended.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	sessions := make([]*Session, 0, len(c.sessions))
	for s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(s.Close)
	}
	wg.Wait()
	c.cache.close()
	c.sp.close()
}

// Session is one chat's MCP connections, one per configured server.
type Session struct {
	client      *Client
	workspace   string
	private     string
	conns       map[string]*connection
	closeOnce   sync.Once
	queueNotice atomic.Pointer[func(server string, ahead int)]
	elicitor    atomic.Pointer[chat.Elicitor]
	sampler     atomic.Pointer[chat.Sampler]

	changedMu sync.Mutex
	changed   []<-chan struct{} // refreshes after its servers said their tools changed

	turn atomic.Pointer[turnMark] // the chat's running turn (BeginTurn), or nil
}

// toolsChanged records that one of the session's servers said its tools
// changed; done is closed when the catalogue has been refreshed.
func (s *Session) toolsChanged(done <-chan struct{}) {
	s.changedMu.Lock()
	if n := len(s.changed); n == 0 || s.changed[n-1] != done { // a flood waits for one refresh
		s.changed = append(s.changed, done)
	}
	s.changedMu.Unlock()
}

// ToolsChanged reports whether one of the session's servers said its tools
// changed (notifications/tools/list_changed) since the last call, and
// waits until ctx ends for the catalogue to be refreshed: the chat's next
// step then offers the new list (Client.Tools). Other chats get it with
// their next turn.
func (s *Session) ToolsChanged(ctx context.Context) bool {
	s.changedMu.Lock()
	pending := s.changed
	s.changed = nil
	s.changedMu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return true
		}
	}
	return len(pending) > 0
}

// SetElicitor sets who answers the elicitations of the session's servers
// (the chat's user): the servers started after it are told the client
// supports elicitation. Without one every elicitation is declined.
func (s *Session) SetElicitor(e chat.Elicitor) { s.elicitor.Store(&e) }

// SetSampler sets who answers the sampling requests of the session's
// servers whose entry says "sampling": true (the bot's model), for the
// servers started after it.
func (s *Session) SetSampler(sm chat.Sampler) { s.sampler.Store(&sm) }

// asked is what the session answers its servers.
func (s *Session) asked() asked {
	var a asked
	if e := s.elicitor.Load(); e != nil {
		a.elicitor = *e
	}
	if sm := s.sampler.Load(); sm != nil {
		a.sampler = *sm
	}
	return a
}

// OnQueue sets what the session is told, once per wait, when a call waits
// for a free slot under a server's ceiling (maxLive): the server and the
// number of chats ahead. The chat should hear of it ("Waiting for a free
// browser — 2 chats ahead.").
func (s *Session) OnQueue(f func(server string, ahead int)) { s.queueNotice.Store(&f) }

// Workspace is the folder the session's processes run in.
func (s *Session) Workspace() string { return s.workspace }

// Call calls tool with args (a JSON object) on its server's process in this
// session, starting the process if needed. Server failures, timeouts and
// crashes come back as error results the model can act on; the error is
// non-nil only when ctx ended (the turn was cancelled) or the session is
// closed.
func (s *Session) Call(ctx context.Context, tool Tool, args json.RawMessage) (Result, error) {
	if tool.kind != nil {
		return tool.kind.call(ctx, s, tool, args)
	}
	conn, ok := s.conns[tool.Server]
	if !ok {
		return ErrorResult(tool.Server, tool.Name, fmt.Sprintf("unknown MCP server %q", tool.Server)), nil
	}
	return conn.call(ctx, tool, args)
}

// Prewarm starts server's process for this chat ahead of its first call,
// in the background, when none runs and a slot under the server's ceiling
// is free now (it never waits, nor stops another chat's process): the
// chat's first call then finds it started or starting. For a message
// that will likely use the server while the model thinks.
func (s *Session) Prewarm(server string) {
	if conn, ok := s.conns[server]; ok {
		conn.prewarm()
	}
}

// Restart stops name's process so that the next call starts a fresh one
// (/mcp restart <name>).
func (s *Session) Restart(name string) error {
	cfg, _ := s.client.Server(name)
	conn, ok := s.conns[cfg.Name]
	if !ok {
		return s.client.unknownServer(name)
	}
	conn.stop()
	return nil
}

// Stop stops every process of the session, concurrently; the session stays
// usable (a new conversation starts fresh processes).
func (s *Session) Stop() { s.each((*connection).stop) }

// Close stops every process for good. Idempotent.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		s.each((*connection).close)
		s.client.mu.Lock()
		delete(s.client.sessions, s)
		s.client.mu.Unlock()
	})
}

func (s *Session) each(f func(*connection)) {
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Go(func() { f(c) })
	}
	wg.Wait()
}

// Status returns a snapshot of name's connection.
func (s *Session) Status(name string) (ConnStatus, bool) {
	conn, ok := s.conns[name]
	if !ok {
		return ConnStatus{}, false
	}
	return conn.status(), true
}
