package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// Options configure a Client. Servers must already be merged and validated,
// in source order.
type Options struct {
	Servers  []mcpconfig.ServerConfig
	Cache    *CatalogCache         // required: the process-wide catalogue cache
	Env      mcpconfig.Environment // required
	Redactor Redactor
	Logger   *slog.Logger
	// Builtins are the names of the host's built-in tools (such as send):
	// an MCP tool exposed under one of them is refused.
	Builtins []string
	// ClientName and ClientVersion are sent in the handshake.
	ClientName, ClientVersion string
	// Owner marks every process (see OwnerEnv and ReapOrphans); empty:
	// no mark.
	Owner string
}

// Client is the process-wide MCP side of the bot: the configured servers,
// their shared catalogues and every session's connections.
type Client struct {
	servers  []mcpconfig.ServerConfig
	cache    *CatalogCache
	env      mcpconfig.Environment
	redactor Redactor
	logger   *slog.Logger
	builtins []string
	client   clientInfo
	owner    string

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// New returns a Client. It does no I/O: catalogues are discovered on first
// use, processes start on the first call.
func New(o Options) *Client {
	c := &Client{
		servers:  o.Servers,
		cache:    o.Cache,
		env:      o.Env,
		redactor: o.Redactor,
		logger:   o.Logger,
		builtins: o.Builtins,
		client:   clientInfo{Name: o.ClientName, Version: o.ClientVersion},
		owner:    o.Owner,
		sessions: map[*Session]struct{}{},
	}
	if c.logger == nil {
		c.logger = discardLogger()
	}
	c.logger = c.logger.With("component", "mcp")
	if c.redactor == nil {
		c.redactor = identity{}
	}
	if c.client.Name == "" {
		c.client.Name = "volcanicbot"
	}
	if c.client.Version == "" {
		c.client.Version = "dev"
	}
	return c
}

// Servers returns the configured servers in source order, disabled ones
// included.
func (c *Client) Servers() []mcpconfig.ServerConfig { return c.servers }

// Server returns the server named name (names compare ordinally).
func (c *Client) Server(name string) (mcpconfig.ServerConfig, bool) {
	for _, s := range c.servers {
		if s.Name == name {
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
}

// Discover returns every server's catalogue (disabled servers with neither
// catalogue nor error), discovering the enabled ones concurrently through
// the cache.
func (c *Client) Discover(ctx context.Context) []ServerCatalog {
	out := make([]ServerCatalog, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		out[i].Config = s
		if !s.Enabled {
			continue
		}
		wg.Go(func() {
			out[i].Catalog, out[i].Err = c.cache.Get(ctx, s)
		})
	}
	wg.Wait()
	return out
}

// Tools returns the tools of every discovered server with names resolved
// across servers and built-ins (first server in source order wins), and the
// refusals. It logs nothing: callers report refusals as they see fit.
func (c *Client) Tools(ctx context.Context) ([]Tool, []Refusal) {
	var cats []Catalog
	for _, sc := range c.Discover(ctx) {
		if sc.Err == nil && sc.Config.Enabled {
			cats = append(cats, sc.Catalog)
		}
	}
	return ResolveTools(cats, c.builtins, nil)
}

// NewSession returns the MCP side of one chat session, whose processes run
// in workspace. Nothing starts until the first call.
func (c *Client) NewSession(workspace string) (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	s := &Session{client: c, workspace: workspace, conns: make(map[string]*connection, len(c.servers))}
	for _, cfg := range c.servers {
		s.conns[cfg.Name] = newConnection(cfg, workspace, c)
	}
	c.sessions[s] = struct{}{}
	return s, nil
}

// Close closes every session's connections, concurrently, and refuses new
// sessions. It returns when every process is gone.
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
}

// Session is one chat's MCP connections, one per configured server.
type Session struct {
	client    *Client
	workspace string
	conns     map[string]*connection
	closeOnce sync.Once
}

// Workspace is the folder the session's processes run in.
func (s *Session) Workspace() string { return s.workspace }

// Call calls tool with args (a JSON object) on its server's process in this
// session, starting the process if needed. Server failures, timeouts and
// crashes come back as error results the model can act on; the error is
// non-nil only when ctx ended (the turn was cancelled) or the session is
// closed.
func (s *Session) Call(ctx context.Context, tool Tool, args json.RawMessage) (Result, error) {
	conn, ok := s.conns[tool.Server]
	if !ok {
		return ErrorResult(tool.Server, tool.Name, fmt.Sprintf("unknown MCP server %q", tool.Server)), nil
	}
	return conn.call(ctx, tool, args)
}

// Restart stops name's process so that the next call starts a fresh one
// (/mcp restart <name>).
func (s *Session) Restart(name string) error {
	conn, ok := s.conns[name]
	if !ok {
		return fmt.Errorf("no MCP server named %q", name)
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
