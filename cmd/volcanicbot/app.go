package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/liveview"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/spend"
	"github.com/volcanicbot/volcanicbot/internal/store"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// inboxDir is the bot's update journal, under the data dir.
const inboxDir = "inbox"

// accessDir is the folder, under the data directory, of the users admins
// added and the codes strangers were refused with (internal/pairing).
const accessDir = "access"

// usageDir holds the record of model usage (package usage), under the
// data directory.
const usageDir = "usage"

// scheduleDir holds the scheduled tasks and the ledger of their runs and
// deliveries (internal/schedule), under the data directory.
const scheduleDir = "schedule"

// shutdownTimeout bounds the graceful shutdown: turns cancelled, MCP
// processes stopped, transcripts closed.
const shutdownTimeout = 8 * time.Second

// Main is the wired daemon: every long-lived component, built by
// constructors from the configuration. It is the only place that knows
// every package; an end-to-end test runs it in-process against fakes.
type Main struct {
	cfg     *Config
	logger  *slog.Logger
	secrets *redact.Registry
	env     *redact.EnvFilter
	preset  preset.Playwright
	mcp     *mcpclient.Client
	tokens  *llm.Tokenizer       // counts tokens as the models do
	metrics *metrics             // GET /metrics
	tracker *mcpclient.Tracker   // the MCP servers' process trees
	memPlan mcpclient.MemoryPlan // how the memory budget was shared, for the start-up log
	lock    *dataDirLock         // held while Run runs, released by Close
	// live is the live view of the browser hand-offs (liveview.go); nil
	// when they are off. Set by chatSide.
	live *liveview.Server

	// browserWhy says why the chats share one browser or have one each.
	browserWhy string
	// httpLimits bound the HTTP listeners' clients; the zero value is
	// defaultHTTPLimits (tests shorten them).
	httpLimits httpLimits

	// HTTPClient, when set, is used for Telegram and the model (tests).
	HTTPClient *http.Client
	// Model, when set, replaces the configured model (benchmarks).
	Model llm.Model
	// Tracking is how Run tracks the MCP servers' process trees; the zero
	// value picks the best this system allows (tests force the others).
	Tracking mcpclient.TrackMode
	// TelegramLimits are the flood limits the bot keeps under; the zero
	// value is Telegram's (telegram.DefaultLimits). Tests against a fake that
	// enforces none lift them.
	TelegramLimits telegram.Limits
	// UsageClock, when set, is the clock of the daily allowances
	// (tests move it to the next UTC day).
	UsageClock func() time.Time
	// DiscoveryWait, when set, replaces the longest a turn waits for the
	// MCP servers' first discoveries (session.DefaultDiscoveryWait):
	// tests whose first message must see the fake's tools, on a machine
	// too loaded to discover it within seconds, wait longer.
	DiscoveryWait time.Duration
}

// NewMain loads the configuration from environ and builds the components.
// It starts nothing: Run does.
func NewMain(stderr io.Writer, environ []string) (*Main, error) {
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return nil, err
	}
	return newMainFromConfig(cfg, stderr, environ)
}

func newMainFromConfig(cfg *Config, stderr io.Writer, environ []string) (*Main, error) {
	env := redact.NewEnvFilter(environ)
	secrets := redact.NewRegistry()
	secrets.Add(env.Secrets()...)
	secrets.Add(cfg.Telegram.Token, cfg.LLM.OpenAIKey, cfg.LLM.AnthropicKey, cfg.Speech.STTAPIKey, cfg.Speech.TTSAPIKey)

	logger, err := NewLogger(stderr, cfg.Log.Level, cfg.Log.Format, isTerminal(stderr), secrets)
	if err != nil {
		return nil, err
	}

	settings, err := mcpconfig.LoadSettingsFile(cfg.AgentDir)
	if err != nil {
		return nil, err
	}
	pw, browserWhy := cfg.Playwright.WithMode(cfg.DataDir)
	pw.StateDir = filepath.Join(cfg.DataDir, "browser")
	secrets.Add(redact.URLSecrets(pw.CDPEndpoint)...)
	if name, value, ok := strings.Cut(pw.CDPHeader, ":"); ok {
		secrets.Add(redact.HeaderSecrets(map[string]string{strings.TrimSpace(name): strings.TrimSpace(value)})...)
	}
	browser := pw.Server()
	browser.PromptSection = preset.BrowserSection(true, pw.OutputDir()) // send is always offered
	servers := mcpconfig.Merge(logger, cfg.MCPServers, []mcpconfig.ServerConfig{browser}, settings)
	// Every server that runs processes for the chats gets a ceiling from
	// the one memory budget, unless it has one.
	limit := int64(cfg.MemoryLimitMiB) << 20
	if limit == 0 {
		limit = memoryLimit()
	}
	servers, memPlan := mcpclient.SizeCeilings(servers, limit)
	pw = pw.Sized(servers) // for the start-up line
	for _, s := range servers {
		// Secrets written into a server's env, headers or args are known
		// secrets too, as expanded: literally, or as ${VAR} (${VAR:-default})
		// of a variable whose name looks harmless; and a pre-registered
		// OAuth client's secret.
		v := s.Values(env.Lookup)
		secrets.Add(redact.ExplicitSecrets(v.Env)...)
		secrets.Add(redact.HeaderSecrets(v.Headers)...)
		secrets.Add(redact.ArgSecrets(v.Args)...) // /mcp <name> shows the command line
		secrets.Add(v.OAuth.ClientSecret)
	}

	owner := ownerMark(cfg.DataDir)
	tracker := mcpclient.NewTracker(mcpclient.TrackerOptions{Owner: owner, Logger: logger})

	var oom *mcpclient.OOMCounter
	if c, err := mcpclient.FindOOMCounter(); err == nil {
		oom = &c
	} else {
		logger.Debug("the kernel's OOM kills are not watched", "err", err)
	}

	tokens := &llm.Tokenizer{} // built on its first use
	var client *mcpclient.Client
	met := newMetrics(func() []mcpclient.ServerLoad { return client.Load() })
	client = mcpclient.New(mcpclient.Options{
		Servers:       servers,
		Env:           env,
		Redactor:      secrets,
		Logger:        logger,
		Builtins:      session.BuiltinNames(),
		ClientName:    "volcanicbot",
		ClientVersion: version,
		Owner:         owner,
		Tracker:       tracker,

		MaxResultTokens: cfg.MaxResultTokens,
		CountTokens:     tokens.Count,
		Observer:        met,
		OOM:             oom,
		AuthDir:         filepath.Join(cfg.DataDir, mcpAuthDir),
		CatalogDir:      filepath.Join(cfg.DataDir, mcpCatalogDir),
	})
	return &Main{cfg: cfg, logger: logger, secrets: secrets, env: env, preset: pw, browserWhy: browserWhy, mcp: client,
		tracker: tracker, tokens: tokens, metrics: met, memPlan: memPlan}, nil
}

// loginCallbackPath is where /mcp login's browser comes back on HTTP_ADDR.
const loginCallbackPath = "/mcp/oauth/callback"

// loginCallbackURL is the public address of the login callback: at the
// webhook's origin, which reaches HTTP_ADDR from outside; "" without a
// webhook (the admin pastes the address back).
func loginCallbackURL(webhook string) string {
	u, err := url.Parse(webhook)
	if webhook == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + loginCallbackPath
}

// mcpAuthDir holds, under the data directory, the OAuth state of the
// servers at a URL (tokens, client registrations): a 0600 file each.
const mcpAuthDir = "mcp-auth"

// mcpCatalogDir keeps, under the data directory, each MCP server's last
// tool list (a 0600 file each), offered at once after a restart.
const mcpCatalogDir = "mcp-catalog"

// serverWarnings are what the operator should know about the configured
// servers: fields of other clients kept but not applied, references to
// unset variables (${NAME}, ${env:NAME}) and secrets put in a command
// line. Run logs them; check prints them.
func (m *Main) serverWarnings() []string {
	var out []string
	removed := map[string]bool{}
	for _, name := range m.env.Removed() {
		removed[name] = true
	}
	for _, s := range m.mcp.Servers() {
		for _, w := range s.Warnings {
			out = append(out, fmt.Sprintf("server %q: %s", s.Display(), w))
		}
		if unset := s.UnsetVariables(m.env.Lookup); len(unset) > 0 {
			out = append(out, fmt.Sprintf("server %q: ${…} refers to %s, not set in the bot's environment: the server gets an empty value "+
				"(give a default with ${NAME:-default})", s.Display(), strings.Join(unset, ", ")))
		}
		var secret []string
		for _, name := range s.ArgVariables() {
			if removed[name] {
				secret = append(secret, name)
			}
		}
		if len(secret) > 0 {
			out = append(out, fmt.Sprintf("server %q: its command line holds %s, which every user of the host can read in the process list: "+
				"pass it in env instead", s.Display(), strings.Join(secret, ", ")))
		}
	}
	return out
}

// migrateChats moves each chat's private state out of its workspace, where
// versions before kept it (<workspace>/.volcanic/), into its private
// folder (chatdir), before any chat starts. The data directory is locked.
func (m *Main) migrateChats() error {
	own, err := store.OwnerOf(m.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("the chats' private state: %w", err)
	}
	mig, err := chatdir.New(m.cfg.DataDir).Migrate(own)
	for _, p := range mig.Kept {
		m.logger.Warn("a chat's private state from its workspace met a newer one of the same name: both kept", "path", p)
	}
	for _, p := range mig.Skipped {
		m.logger.Warn("a workspace's .volcanic is not a folder: not the bot's, left where it is", "path", p)
	}
	if mig.Chats > 0 {
		m.logger.Info("moved the chats' private state out of their workspaces", "chats", mig.Chats,
			"to", filepath.Join(m.cfg.DataDir, "private"))
	}
	if err != nil {
		return err
	}
	left, err := chatdir.New(m.cfg.DataDir).Leftovers()
	if err != nil {
		// Only a warning would come of it: the start goes on.
		m.logger.Warn("could not look for conversations left in workspaces by a rollback", "err", err)
	}
	for _, dir := range left {
		m.logger.Warn("a workspace holds a conversation or browser logins in .volcanic/, as versions before the private folders "+
			"kept them (a rollback ran one on this data directory): the bot does not read them, the chat's tools can — "+
			"move that folder out of the workspace or delete it (docs/deployment.md, Rolling back)", "path", dir)
	}
	return nil
}

// ownerMark ties this bot's processes to its data dir, so the next start
// can end what a crash left (see mcpclient.Tracker's ReapOrphans).
func ownerMark(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:8])
}

// logStart says what the bot starts with: the warnings about its
// configuration, the browser, the memory plan and the version.
func (m *Main) logStart(model llm.Model) {
	if len(m.cfg.Telegram.AllowedUsers) == 0 {
		m.logger.Warn("TELEGRAM_ALLOWED_USERS is empty: the bot answers nobody")
	}
	for _, w := range m.serverWarnings() {
		m.logger.Warn("MCP configuration: " + w)
	}
	m.logger.Info(m.preset.StartupLine())
	if m.preset.IsEnabled() {
		m.logger.Info("browser mode", "mode", m.preset.ModeName(), "why", m.browserWhy)
	}
	m.logger.Info(m.memPlan.String())
	m.logger.Info("volcanicbot starting", "version", version, "data_dir", m.cfg.DataDir,
		"provider", providerName(unwrapModel(model)), "model", m.cfg.LLM.Model, "models", strings.Join(m.cfg.LLM.Models, ","), "mcp_servers", len(m.mcp.Servers()),
		"allowed_users", len(m.cfg.Telegram.AllowedUsers))
}

// Run runs the bot until ctx ends, then shuts down gracefully: polling
// stops, running turns are cancelled, every MCP process is stopped and the
// transcripts are closed.
func (m *Main) Run(ctx context.Context) error {
	if err := m.cfg.Validate(true); err != nil {
		return err
	}
	model := m.Model
	if model == nil {
		var err error
		if model, err = m.model(); err != nil {
			return err
		}
	}
	model = m.metrics.model(model)
	if err := m.startProcesses(); err != nil {
		return err
	}
	if err := m.migrateChats(); err != nil {
		return err
	}
	m.logStart(model)

	ledger, err := m.openLedger(model)
	if err != nil {
		return err
	}
	defer ledger.Close()

	jobs, err := schedule.OpenLedger(filepath.Join(m.cfg.DataDir, scheduleDir))
	if err != nil {
		return fmt.Errorf("scheduled tasks: %w", err)
	}
	defer jobs.Close() // after the scheduler's Close (closeChatSide)

	tg, sessions, b, sched, err := m.chatSide(model, ledger, jobs)
	if err != nil {
		return err
	}
	// The listeners are bound before anything runs: an address in use ends
	// the start with nothing left running.
	listeners, err := m.httpListeners(tg, b)
	if err != nil {
		m.closeChatSide(sched, sessions, tg)
		return err
	}
	// Before the bot hands in again what the last run left in its inbox:
	// a chat whose turn the restart cut off is told so first.
	if n, err := sessions.Resume(); err != nil {
		m.logger.Warn("telling the chats whose turn a restart cut off", "err", err)
	} else if n > 0 {
		m.logger.Info("telling the chats whose turn a restart cut off", "chats", n)
	}

	// Jobs due while the bot was down run now, once; answers a stop left
	// undelivered are sent.
	if err := sched.Start(ctx); err != nil {
		m.closeChatSide(sched, sessions, tg)
		return err
	}

	g, gctx := errgroup.WithContext(ctx)
	m.upkeep(gctx, g, ledger)
	for _, l := range listeners {
		l.serve(gctx, g)
	}
	g.Go(func() error { return b.Run(gctx) })
	runErr := g.Wait()

	m.logger.Info("shutting down")
	m.closeChatSide(sched, sessions, tg)
	if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	return nil
}

// openLedger loads the usage journal and the daily allowances (the caller
// closes it), and hands its figures to the metrics.
func (m *Main) openLedger(model llm.Model) (*spend.Ledger, error) {
	ledger := spend.New(spend.Options{
		Dir:     filepath.Join(m.cfg.DataDir, usageDir),
		PerChat: m.cfg.LLM.DailyTokensPerChat, PerUser: m.cfg.LLM.DailyTokensPerUser,
		PerChatUSD: m.cfg.LLM.DailyUSDPerChat, PerUserUSD: m.cfg.LLM.DailyUSDPerUser,
		Prices: m.cfg.LLM.Prices, DefaultModel: m.cfg.LLM.Model,
		Logger: m.logger, Now: m.UsageClock,
	})
	if err := ledger.Load(); err != nil {
		return nil, err
	}
	m.metrics.spend.Store(&spendSource{stats: ledger.Stats, provider: providerName(unwrapModel(model))})
	if m.cfg.LLM.DailyTokensPerChat > 0 || m.cfg.LLM.DailyTokensPerUser > 0 {
		m.logger.Info("daily token allowance", "per_chat", m.cfg.LLM.DailyTokensPerChat, "per_user", m.cfg.LLM.DailyTokensPerUser)
	}
	if m.cfg.LLM.DailyUSDPerChat > 0 || m.cfg.LLM.DailyUSDPerUser > 0 {
		m.logger.Info("daily money allowance", "per_chat_usd", m.cfg.LLM.DailyUSDPerChat, "per_user_usd", m.cfg.LLM.DailyUSDPerUser)
	}
	return ledger, nil
}

// upkeep starts, in g, what runs beside the chats until ctx ends.
func (m *Main) upkeep(ctx context.Context, g *errgroup.Group, ledger *spend.Ledger) {
	// The usage journal keeps the current month: older days go, at once
	// and after every UTC midnight.
	g.Go(func() error { ledger.Maintain(ctx); return nil })
	// The kernel's OOM kills under the bot's memory limit are told in the
	// log and /mcp.
	g.Go(func() error { m.mcp.WatchMemory(ctx, 0); return nil })
	// The catalogue is built in the background: a slow server must not
	// hold up polling. A turn that comes first waits for the servers'
	// first discoveries.
	g.Go(func() error {
		tools, refusals := m.mcp.Tools(ctx)
		if ctx.Err() != nil {
			return nil
		}
		for _, r := range refusals {
			m.logger.Warn("MCP tool refused", "refusal", r.String())
		}
		m.logger.Info("MCP catalogue ready", "tools", len(tools), "refused", len(refusals))
		return nil
	})
}

// closeChatSide ends the hand-offs (stopped, and their turns with them),
// the scheduler (its runs and deliveries, which use the sessions and the
// chat), the sessions (their turns, goroutines and MCP processes), then the
// update journal.
func (m *Main) closeChatSide(sched *schedule.Scheduler, sessions *session.Manager, tg *telegram.Client) {
	if m.live != nil {
		m.live.Close()
	}
	if err := sched.Close(); err != nil {
		m.logger.Warn("shutdown: the scheduler", "err", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := sessions.Close(sctx); err != nil {
		m.logger.Warn("shutdown", "err", err)
	}
	if err := tg.Close(); err != nil { // after the sessions: they report what they took
		m.logger.Warn("shutdown: the update journal", "err", err)
	}
}

// model builds the LLM adapter the configuration names. With no
// LLM_PROVIDER, the one whose key is set is used.
func (m *Main) model() (llm.Model, error) {
	c := m.cfg.LLM
	provider := m.cfg.modelProvider()
	if provider == "" {
		return nil, errors.New("LLM_PROVIDER is not set (openai or anthropic), and no OPENAI_API_KEY or ANTHROPIC_API_KEY either")
	}
	if c.Model == "" {
		return nil, errors.New("LLM_MODEL is required: the model name, e.g. gpt-4.1-mini or claude-sonnet-4-5")
	}
	switch provider {
	case llm.ProviderOpenAI:
		return llm.NewOpenAI(llm.OpenAIOptions{APIKey: c.OpenAIKey, BaseURL: c.OpenAIBaseURL, Model: c.Model,
			MaxTokens: c.MaxTokens, HTTPClient: m.HTTPClient, CountTokens: m.tokens.Count}), nil
	case llm.ProviderAnthropic:
		if c.AnthropicKey == "" {
			return nil, errors.New("ANTHROPIC_API_KEY is required with LLM_PROVIDER=anthropic")
		}
		return llm.NewAnthropic(llm.AnthropicOptions{APIKey: c.AnthropicKey, BaseURL: c.AnthropicBaseURL, Model: c.Model,
			MaxTokens: c.MaxTokens, AuthHeader: c.AnthropicAuthHeader, Version: c.AnthropicVersion,
			HTTPClient: m.HTTPClient, CountTokens: m.tokens.Count}), nil
	}
	return nil, fmt.Errorf("LLM_PROVIDER must be openai or anthropic (got %q)", provider)
}

// unwrapModel is the model inside the metrics' wrapper.
func unwrapModel(m llm.Model) llm.Model {
	if o, ok := m.(observedModel); ok {
		return o.Model
	}
	return m
}

// providerName names the model's provider for the log.
func providerName(m llm.Model) string {
	switch m.(type) {
	case *llm.OpenAI:
		return llm.ProviderOpenAI
	case *llm.Anthropic:
		return llm.ProviderAnthropic
	}
	return fmt.Sprintf("%T", m)
}

// Close stops every MCP process and whatever they left, and releases the
// data directory. Safe to call more than once.
func (m *Main) Close() {
	m.mcp.Close()
	m.tracker.Close()
	m.lock.release()
	m.lock = nil
}

// lookupIn returns a lookup function over an os.Environ-style snapshot.
func lookupIn(environ []string) func(string) (string, bool) {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// isTerminal reports whether w is a character device (colour in logs).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
