package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// DefaultFailureCooldown is how long a failed discovery is remembered before
// the next request tries again.
const DefaultFailureCooldown = 60 * time.Second

// catalogCache discovers each server configuration's tools once per process
// and shares the result: the process-wide state of the Client.
//
// Concurrent requests for the same key share one discovery, which runs
// detached from every caller's context (each caller waits with its own).
// Success is kept for the life of the process; failure for the cooldown,
// after which the next request starts a new discovery in the background.
// Only the first discovery of a key is ever waited for: while a later one
// runs, callers get the outcome before it, so a server that hangs at start
// holds up no turn but the ones that came before its first answer.
type catalogCache struct {
	sp       *spawner
	store    *catalogStore // the last lists, kept across restarts
	cooldown time.Duration
	now      func() time.Time
	ctx      context.Context // ends with Close: discoveries give up
	cancel   context.CancelFunc

	mu         sync.Mutex
	entries    map[string]*catalogEntry
	refreshers map[string]*refresher // by key, once a server said its tools changed
	closed     bool
	wg         sync.WaitGroup // discoveries, their clean-ups, and refreshes

	// version changes whenever a catalogue does (a discovery or a refresh
	// ended): a turn that resolved its tools before offers the new ones
	// from its next step.
	version atomic.Uint64
}

type catalogEntry struct {
	done    chan struct{} // closed when the discovery finished
	catalog Catalog
	err     error
	failed  time.Time
	// prev is the finished entry this one retries: what callers get
	// while it runs.
	prev *catalogEntry
	// kept is the catalogue of the list kept on disk from an earlier run
	// (same configuration), offered without waiting while the first
	// discovery runs; nil when there is none.
	kept *Catalog
}

func newCatalogCache(sp *spawner, store *catalogStore, cooldown time.Duration, now func() time.Time) *catalogCache {
	if cooldown == 0 {
		cooldown = DefaultFailureCooldown
	}
	if now == nil {
		now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &catalogCache{sp: sp, store: store, cooldown: cooldown, now: now, ctx: ctx, cancel: cancel, entries: map[string]*catalogEntry{},
		refreshers: map[string]*refresher{}}
}

// get returns cfg's catalogue, discovering it if no fresh entry exists and
// waiting for it only if it is the key's first discovery. ctx bounds only
// this caller's wait.
func (c *catalogCache) get(ctx context.Context, cfg mcpconfig.ServerConfig) (Catalog, error) {
	e, err := c.entry(cfg)
	if err != nil {
		return Catalog{}, err
	}
	if e.prev != nil && !isClosed(e.done) {
		return e.prev.catalog, e.prev.err // a retry runs: no waiting for it
	}
	select {
	case <-e.done:
		return e.catalog, e.err
	case <-ctx.Done():
		return Catalog{}, context.Cause(ctx)
	}
}

// lookup returns what is known of cfg's catalogue without waiting:
// discovering is true while its first discovery runs and no list was kept
// from an earlier run (the kept one is returned then). It starts a
// discovery when none ran or the cooldown of a failure is over.
func (c *catalogCache) lookup(cfg mcpconfig.ServerConfig) (cat Catalog, err error, discovering bool) {
	return c.within(context.Background(), cfg, 0)
}

// within is lookup waiting up to wait for a first discovery when no list
// was kept from an earlier run; ctx bounds the wait too.
func (c *catalogCache) within(ctx context.Context, cfg mcpconfig.ServerConfig, wait time.Duration) (cat Catalog, err error, discovering bool) {
	e, err := c.entry(cfg)
	if err != nil {
		return Catalog{}, err, false
	}
	switch {
	case isClosed(e.done):
		return e.catalog, e.err, false
	case e.prev != nil:
		return e.prev.catalog, e.prev.err, false
	case e.kept != nil:
		return *e.kept, nil, false
	case wait <= 0:
		return Catalog{}, nil, true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.done:
		return e.catalog, e.err, false
	case <-t.C:
		return Catalog{}, nil, true
	case <-ctx.Done():
		return Catalog{}, context.Cause(ctx), false
	}
}

// entry returns cfg's current entry, starting a discovery when there is
// none or the cooldown of a failure is over.
func (c *catalogCache) entry(cfg mcpconfig.ServerConfig) (*catalogEntry, error) {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	_, ok := c.entries[key]
	c.mu.Unlock()
	var kept *Catalog
	if !ok { // the first use in this process: the list of an earlier run, read outside the lock
		kept = c.kept(cfg)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	e, ok := c.entries[key]
	switch {
	case !ok:
		e = &catalogEntry{done: make(chan struct{}), kept: kept}
	case isClosed(e.done) && e.err != nil && c.now().Sub(e.failed) >= c.cooldown: // done first: it orders the writes
		e = &catalogEntry{done: make(chan struct{}), prev: e}
	default:
		return e, nil
	}
	c.entries[key] = e
	c.wg.Go(func() { c.discover(cfg, e) })
	return e, nil
}

// peek returns cfg's catalogue if a successful discovery is cached,
// without starting one.
func (c *catalogCache) peek(cfg mcpconfig.ServerConfig) (Catalog, bool) {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !isClosed(e.done) || e.err != nil {
		return Catalog{}, false
	}
	return e.catalog, true
}

// forget drops cfg's finished entry, so that the next use discovers it
// again at once (after a login, say); one under way stays.
func (c *catalogCache) forget(cfg mcpconfig.ServerConfig) {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && isClosed(e.done) {
		delete(c.entries, key)
	}
	c.mu.Unlock()
}

// close ends the discoveries under way and waits for them and their
// clean-ups: no discovery process or temporary directory is left.
func (c *catalogCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// kept is the catalogue of the list kept for cfg from an earlier run, or
// nil.
func (c *catalogCache) kept(cfg mcpconfig.ServerConfig) *Catalog {
	info, raws, ok := c.store.load(cfg)
	if !ok {
		return nil
	}
	cat, err := c.build(cfg, info, raws)
	if err != nil {
		return nil
	}
	return &cat
}

// discover spawns the server in a fresh temporary directory, performs the
// handshake and a paginated tools/list under the startup timeout, and
// records the outcome in e; the list is kept for the next run.
func (c *catalogCache) discover(cfg mcpconfig.ServerConfig, e *catalogEntry) {
	defer c.version.Add(1)
	defer close(e.done)
	start := time.Now()
	info, raws, err := c.discoverOnce(cfg)
	var cat Catalog
	if err == nil {
		cat, err = c.build(cfg, info, raws)
	}
	logger := c.sp.logger
	if err != nil {
		if nl, ok := needsLogin(err); ok {
			e.err = &DiscoveryError{Server: cfg.Name, Err: nl} // its text names no secret
			// The tools it offered when it was logged in stay offered:
			// a call says a login is needed, instead of the tools
			// vanishing.
			if saved := c.kept(cfg); saved != nil && !nl.StepUp {
				e.catalog = *saved
			} else if saved, ok := c.sp.auth.savedCatalog(cfg.Name); ok && !nl.StepUp {
				e.catalog = saved // kept by a version before the catalogue store
			}
		} else {
			e.err = &DiscoveryError{Server: cfg.Name, Err: errors.New(chat.CapText(c.sp.redactor.Redact(err.Error()), MaxErrorBytes))}
		}
		e.failed = c.now()
		logger.Warn("MCP server discovery failed", "server", cfg.Name, "err", e.err.Error(), "elapsed_ms", time.Since(start).Milliseconds())
		return
	}
	e.catalog = cat
	c.store.save(cfg, info, raws)
	for _, w := range cat.Warnings {
		logger.Warn("MCP server catalogue: "+w, "server", cfg.Name)
	}
	logger.Info("MCP server discovered", "server", cfg.Name, "tools", len(cat.Tools),
		"protocol", cat.ServerInfo.ProtocolVersion, "elapsed_ms", time.Since(start).Milliseconds())
}

func (c *catalogCache) discoverOnce(cfg mcpconfig.ServerConfig) (ServerInfo, []json.RawMessage, error) {
	dir, err := os.MkdirTemp("", "volcanicbot-discover-*")
	if err != nil {
		return ServerInfo{}, nil, fmt.Errorf("temp dir: %w", err)
	}
	ctx, cancel := context.WithTimeout(c.ctx, cfg.StartupTimeout)
	defer cancel()
	// Nothing of a chat is in a discovery's folder: it is its private one
	// too (the per-chat browser's profile, which a discovery never opens).
	srv, err := c.sp.start(ctx, cfg, mcpconfig.Dirs{Workspace: dir, Private: dir}, nil, asked{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return ServerInfo{}, nil, err
	}
	// The process is stopped and the directory removed after the answer:
	// callers do not wait for the clean-up, close does.
	defer c.wg.Go(func() {
		srv.terminate()
		_ = os.RemoveAll(dir)
	})
	raws, err := srv.rpc.listTools(ctx)
	if err != nil {
		return ServerInfo{}, nil, c.sp.startError(ctx, srv, err, cfg)
	}
	return srv.rpc.info, raws, nil
}

// build is the catalogue of cfg's raw tools/list entries: decoded,
// filtered by the configuration, bounded, redacted and exposed.
func (c *catalogCache) build(cfg mcpconfig.ServerConfig, info ServerInfo, raws []json.RawMessage) (Catalog, error) {
	tools, refused, err := decodeTools(cfg.Name, raws, info.ProtocolVersion)
	if err != nil {
		return Catalog{}, err
	}
	tools, hidden, filtered := filterTools(tools, cfg)
	tools, warnings := limitTools(tools)
	warnings = append(append(refused, filtered...), warnings...)
	redactTools(tools, c.sp.redactor)
	return Catalog{Server: cfg.Name, ServerInfo: info, Tools: ExposeTools(cfg.Name, cfg.ToolPrefix, tools),
		Warnings: warnings, Hidden: hidden}, nil
}

// refreshPause is the least time between two refreshes of one server's
// catalogue: a server that floods notifications/tools/list_changed gets one
// refresh right away and at most one more per pause, whatever it sends.
const refreshPause = time.Second

// refresher is the refreshing of one server's catalogue after its
// notifications/tools/list_changed. Its fields are guarded by the cache's
// mu.
type refresher struct {
	running bool
	next    chan struct{} // closed when the refresh the next notifications wait for has ended
	list    lister        // the live server that sent the last notification
}

// lister lists a live server's tools: its ServerInfo and the raw tools.
type lister func(ctx context.Context) (ServerInfo, []json.RawMessage, error)

// changed records that a live server of cfg said its tools changed; list
// lists them on that server. The catalogue is refreshed at once, or after
// the refresh under way and a pause; the channel returned is closed once a
// refresh that started after the notification has ended (whatever its
// outcome).
func (c *catalogCache) changed(cfg mcpconfig.ServerConfig, list lister) <-chan struct{} {
	key := cfg.Name + "\x00" + cfg.Digest()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		done := make(chan struct{})
		close(done)
		return done
	}
	r := c.refreshers[key]
	if r == nil {
		r = &refresher{}
		c.refreshers[key] = r
	}
	r.list = list
	if r.next == nil {
		r.next = make(chan struct{})
	}
	done := r.next
	if !r.running {
		r.running = true
		c.wg.Go(func() { c.refreshLoop(cfg, key, r) })
	}
	return done
}

// refreshLoop refreshes cfg's catalogue while notifications come, with a
// pause between refreshes.
func (c *catalogCache) refreshLoop(cfg mcpconfig.ServerConfig, key string, r *refresher) {
	pause := time.NewTimer(refreshPause)
	pause.Stop()
	defer pause.Stop()
	for {
		c.mu.Lock()
		done, list := r.next, r.list
		r.next = nil
		c.mu.Unlock()
		c.refresh(cfg, key, list)
		close(done)

		pause.Reset(refreshPause)
		select {
		case <-pause.C:
		case <-c.ctx.Done():
		}
		c.mu.Lock()
		if r.next == nil || c.closed {
			if r.next != nil {
				close(r.next) // shutting down: nobody waits for a refresh that will not come
				r.next = nil
			}
			r.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// refresh lists cfg's tools on a live server and replaces the catalogue;
// a failure keeps the one there is.
func (c *catalogCache) refresh(cfg mcpconfig.ServerConfig, key string, list lister) {
	ctx, cancel := context.WithTimeout(c.ctx, cfg.StartupTimeout)
	defer cancel()
	logger := c.sp.logger
	info, raws, err := list(ctx)
	var cat Catalog
	if err == nil {
		cat, err = c.build(cfg, info, raws)
	}
	if err != nil {
		logger.Warn("MCP server's tools changed, but listing them failed: the catalogue stays as it was", "server", cfg.Name,
			"err", chat.CapText(c.sp.redactor.Redact(err.Error()), MaxErrorBytes))
		return
	}
	c.store.save(cfg, info, raws)
	defer c.version.Add(1)
	done := make(chan struct{})
	close(done)
	c.mu.Lock()
	before := -1
	if old, ok := c.entries[key]; ok && isClosed(old.done) && old.err == nil {
		before = len(old.catalog.Tools)
	}
	c.entries[key] = &catalogEntry{done: done, catalog: cat}
	c.mu.Unlock()
	for _, w := range cat.Warnings {
		logger.Warn("MCP server catalogue: "+w, "server", cfg.Name)
	}
	logger.Info("MCP server's tools changed: catalogue refreshed", "server", cfg.Name, "tools_before", before, "tools", len(cat.Tools))
}

// filterTools leaves out the tools cfg keeps from the model: those its
// disabledTools names, those its includeTools (when given) does not
// match, and those its excludeTools matches. It returns what it hid, in
// the server's order, and warnings for the names and patterns that match
// no tool.
func filterTools(tools []Tool, cfg mcpconfig.ServerConfig) (kept []Tool, hidden, warnings []string) {
	if len(cfg.DisabledTools) == 0 && len(cfg.IncludeTools) == 0 && len(cfg.ExcludeTools) == 0 {
		return tools, nil, nil
	}
	used := map[string]bool{} // "field\x00pattern" of every name or pattern that matched
	matches := func(field string, patterns []string, name string, glob bool) bool {
		hit := false
		for _, p := range patterns {
			if (glob && mcpconfig.MatchTool(p, name)) || (!glob && p == name) {
				used[field+"\x00"+p] = true
				hit = true
			}
		}
		return hit
	}
	kept = make([]Tool, 0, len(tools))
	for _, t := range tools {
		off := matches("disabledTools", cfg.DisabledTools, t.MCPName, false)
		if len(cfg.IncludeTools) > 0 && !matches("includeTools", cfg.IncludeTools, t.MCPName, true) {
			off = true
		}
		if matches("excludeTools", cfg.ExcludeTools, t.MCPName, true) {
			off = true
		}
		if off {
			hidden = append(hidden, t.MCPName)
			continue
		}
		kept = append(kept, t)
	}
	for _, f := range []struct {
		name     string
		patterns []string
	}{{"disabledTools", cfg.DisabledTools}, {"includeTools", cfg.IncludeTools}, {"excludeTools", cfg.ExcludeTools}} {
		seen := map[string]bool{}
		for _, p := range f.patterns {
			if !used[f.name+"\x00"+p] && !seen[p] {
				seen[p] = true
				warnings = append(warnings, fmt.Sprintf("%s names %q, which matches no tool of the server", f.name, p))
			}
		}
	}
	if len(kept) == 0 && len(tools) > 0 {
		warnings = append(warnings, fmt.Sprintf("disabledTools, includeTools and excludeTools hide every one of the server's %d tools", len(tools)))
	}
	return kept, hidden, warnings
}

// limitTools keeps the tools within the catalogue's limits: the first
// MaxToolsPerServer, none whose schema is over MaxSchemaBytes (it would
// cost its size in every request), descriptions cut at MaxDescription. It
// says what it left out.
func limitTools(tools []Tool) ([]Tool, []string) {
	var warnings []string
	if len(tools) > MaxToolsPerServer {
		warnings = append(warnings, fmt.Sprintf("the server lists %d tools: only the first %d are offered", len(tools), MaxToolsPerServer))
		tools = tools[:MaxToolsPerServer]
	}
	kept := tools[:0]
	for _, t := range tools {
		if len(t.InputSchema) > MaxSchemaBytes {
			warnings = append(warnings, fmt.Sprintf("tool %q is not offered: its input schema is %d KB, over the limit of %d KB",
				t.MCPName, len(t.InputSchema)>>10, MaxSchemaBytes>>10))
			continue
		}
		t.Description = chat.CapText(t.Description, MaxDescription)
		kept = append(kept, t)
	}
	return kept, warnings
}

// redactTools replaces known secrets in the tools' descriptions and
// schemas, which reach the model in every request: a server given a token
// may put it in a description or a schema's default. A schema that is no
// longer valid JSON after it becomes the empty object schema.
func redactTools(tools []Tool, r Redactor) {
	for i := range tools {
		t := &tools[i]
		t.Description = r.Redact(t.Description)
		if s := r.Redact(string(t.InputSchema)); s != string(t.InputSchema) {
			t.InputSchema = NormalizeSchema(json.RawMessage(s))
			t.modelSchema = ModelSchema(t.InputSchema)
		}
	}
}

// decodeTools reads the raw tools/list entries, keeping each input schema
// verbatim. On protocol 2026-07-28 a tool whose x-mcp-header annotations
// are invalid is left out, with a warning saying why (a client must refuse
// it).
func decodeTools(server string, raws []json.RawMessage, protocol string) (tools []Tool, warnings []string, err error) {
	tools = make([]Tool, 0, len(raws))
	modern := mcp.IsModernProtocol(protocol)
	for i, raw := range raws {
		var t struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				Title           string `json:"title"`
				ReadOnlyHint    *bool  `json:"readOnlyHint"`
				DestructiveHint *bool  `json:"destructiveHint"`
				IdempotentHint  *bool  `json:"idempotentHint"`
				OpenWorldHint   *bool  `json:"openWorldHint"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, nil, fmt.Errorf("tools/list: tool %d: %w", i, err)
		}
		if t.Name == "" {
			return nil, nil, fmt.Errorf("tools/list: tool %d has no name", i)
		}
		desc := t.Description
		if desc == "" {
			desc = firstNonEmpty(t.Annotations.Title, t.Title, t.Name)
		}
		tool := Tool{
			Server:      server,
			MCPName:     t.Name,
			Description: desc,
			InputSchema: NormalizeSchema(t.InputSchema),
			Annotations: chat.Annotations{
				ReadOnlyHint: t.Annotations.ReadOnlyHint, DestructiveHint: t.Annotations.DestructiveHint,
				IdempotentHint: t.Annotations.IdempotentHint, OpenWorldHint: t.Annotations.OpenWorldHint,
			},
		}
		tool.modelSchema = ModelSchema(tool.InputSchema) // once a discovery, not once a turn
		if modern {
			headers, err := paramHeaders(t.Name, tool.InputSchema)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("tool %q is not offered: %v", t.Name, err))
				continue
			}
			tool.ParamHeaders = headers
		}
		tools = append(tools, tool)
	}
	return tools, warnings, nil
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

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}

type identity struct{}

func (identity) Redact(s string) string { return s }
