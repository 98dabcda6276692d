package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// DefaultFailureCooldown is how long a failed discovery is remembered before
// the next request tries again.
const DefaultFailureCooldown = 60 * time.Second

// CatalogCache discovers each server configuration's tools once per process
// and shares the result. It is explicit process-wide state: main makes one
// and hands it to the Client.
//
// Concurrent requests for the same key share one discovery, which runs
// detached from every caller's context (each caller waits with its own).
// Success is kept for the life of the process; failure for the cooldown,
// after which the next request starts a new discovery without waiting for
// it.
type CatalogCache struct {
	env      mcpconfig.Environment
	redactor Redactor
	logger   *slog.Logger
	client   clientInfo
	owner    string
	cooldown time.Duration
	now      func() time.Time

	mu      sync.Mutex
	entries map[string]*catalogEntry
}

type catalogEntry struct {
	done    chan struct{} // closed when the discovery finished
	catalog Catalog
	err     error
	failed  time.Time
}

// CatalogCacheOptions configure a CatalogCache. Zero values take defaults.
type CatalogCacheOptions struct {
	Env      mcpconfig.Environment // required
	Redactor Redactor
	Logger   *slog.Logger
	// ClientName and ClientVersion are sent in the handshake.
	ClientName, ClientVersion string
	// Owner marks every process (see OwnerEnv); empty: no mark.
	Owner string
	// FailureCooldown defaults to DefaultFailureCooldown.
	FailureCooldown time.Duration
	// Now defaults to time.Now (tests move the clock).
	Now func() time.Time
}

// NewCatalogCache returns an empty cache. It does no I/O.
func NewCatalogCache(o CatalogCacheOptions) *CatalogCache {
	c := &CatalogCache{
		env:      o.Env,
		redactor: o.Redactor,
		logger:   o.Logger,
		client:   clientInfo{Name: o.ClientName, Version: o.ClientVersion},
		owner:    o.Owner,
		cooldown: o.FailureCooldown,
		now:      o.Now,
		entries:  map[string]*catalogEntry{},
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.redactor == nil {
		c.redactor = identity{}
	}
	if c.client.Name == "" {
		c.client.Name = "volcanicbot"
	}
	if c.client.Version == "" {
		c.client.Version = "dev"
	}
	if c.cooldown == 0 {
		c.cooldown = DefaultFailureCooldown
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.logger = c.logger.With("component", "mcp")
	return c
}

// Get returns cfg's catalogue, discovering it if no fresh entry exists.
// ctx bounds only this caller's wait.
func (c *CatalogCache) Get(ctx context.Context, cfg mcpconfig.ServerConfig) (Catalog, error) {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && isClosed(e.done) && e.err != nil && c.now().Sub(e.failed) >= c.cooldown { // done first: it orders the writes
		// The cooldown is over: try again, in the background. This caller
		// gets the old failure at once rather than waiting up to the
		// startup timeout for a server that was broken a minute ago; the
		// callers after it see the new outcome.
		next := &catalogEntry{done: make(chan struct{})}
		c.entries[key] = next
		go c.discover(cfg, next)
		c.mu.Unlock()
		return Catalog{}, e.err
	}
	if !ok {
		e = &catalogEntry{done: make(chan struct{})}
		c.entries[key] = e
		go c.discover(cfg, e)
	}
	c.mu.Unlock()

	select {
	case <-e.done:
		return e.catalog, e.err
	case <-ctx.Done():
		return Catalog{}, context.Cause(ctx)
	}
}

// Peek returns cfg's catalogue if a successful discovery is cached,
// without starting one.
func (c *CatalogCache) Peek(cfg mcpconfig.ServerConfig) (Catalog, bool) {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !isClosed(e.done) || e.err != nil {
		return Catalog{}, false
	}
	return e.catalog, true
}

// discover spawns the server in a fresh temporary directory, performs the
// handshake and a paginated tools/list under the startup timeout, and
// records the outcome in e. The process is stopped and the directory removed
// in the background: callers do not wait for the clean-up.
func (c *CatalogCache) discover(cfg mcpconfig.ServerConfig, e *catalogEntry) {
	defer close(e.done)
	start := time.Now()
	cat, err := c.discoverOnce(cfg)
	if err != nil {
		e.err = &DiscoveryError{Server: cfg.Name, Err: errors.New(c.redactor.Redact(err.Error()))}
		e.failed = c.now()
		c.logger.Warn("MCP server discovery failed", "server", cfg.Name, "err", e.err.Error(), "elapsed", time.Since(start))
		return
	}
	e.catalog = cat
	c.logger.Info("MCP server discovered", "server", cfg.Name, "tools", len(cat.Tools),
		"protocol", cat.ServerInfo.ProtocolVersion, "elapsed", time.Since(start).Round(time.Millisecond))
}

func (c *CatalogCache) discoverOnce(cfg mcpconfig.ServerConfig) (Catalog, error) {
	dir, err := os.MkdirTemp("", "volcanicbot-discover-*")
	if err != nil {
		return Catalog{}, fmt.Errorf("temp dir: %w", err)
	}
	cleanupDir := func() { _ = os.RemoveAll(dir) }
	sp, err := cfg.Expand(dir, c.env)
	if err != nil {
		cleanupDir()
		return Catalog{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartupTimeout)
	defer cancel()
	sess, err := openSession(ctx, sp, cfg, sessionDeps{logger: c.logger, redactor: c.redactor, client: c.client, owner: c.owner})
	if err != nil {
		cleanupDir()
		return Catalog{}, err
	}
	defer func() {
		go func() { sess.ep.terminate(); cleanupDir() }()
	}()
	raws, err := sess.rpc.listTools(ctx)
	if err != nil {
		return Catalog{}, sess.startError(ctx, err, cfg)
	}
	tools, err := decodeTools(cfg.Name, raws)
	if err != nil {
		return Catalog{}, err
	}
	return Catalog{Server: cfg.Name, ServerInfo: sess.rpc.info, Tools: ExposeTools(cfg.Name, cfg.ToolPrefix, tools)}, nil
}

// decodeTools reads the raw tools/list entries, keeping each input schema
// verbatim.
func decodeTools(server string, raws []json.RawMessage) ([]Tool, error) {
	tools := make([]Tool, 0, len(raws))
	for i, raw := range raws {
		var t struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				Title string `json:"title"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tools/list: tool %d: %w", i, err)
		}
		if t.Name == "" {
			return nil, fmt.Errorf("tools/list: tool %d has no name", i)
		}
		desc := t.Description
		if desc == "" {
			desc = firstNonEmpty(t.Annotations.Title, t.Title, t.Name)
		}
		tools = append(tools, Tool{
			Server:      server,
			MCPName:     t.Name,
			Description: desc,
			InputSchema: NormalizeSchema(t.InputSchema),
		})
	}
	return tools, nil
}

// DiscoveryError is a failed discovery, cached for the cooldown.
type DiscoveryError struct {
	Server string
	Err    error
}

func (e *DiscoveryError) Error() string { return e.Err.Error() }
func (e *DiscoveryError) Unwrap() error { return e.Err }

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

type identity struct{}

func (identity) Redact(s string) string { return s }
