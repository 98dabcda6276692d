package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// builtinTools are the names of the bot's own tools; an MCP tool may not
// take one of them.
var builtinTools = []string{"send"}

// Main is the wired daemon: every long-lived component, built by
// constructors from the configuration. The only place that knows every
// package.
type Main struct {
	cfg     *Config
	logger  *slog.Logger
	secrets *redact.Registry
	env     *redact.EnvFilter
	cache   *mcpclient.CatalogCache
	mcp     *mcpclient.Client
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
	secrets.Add(cfg.Telegram.Token, cfg.LLM.OpenAIKey, cfg.LLM.AnthropicKey)

	logger, err := NewLogger(stderr, cfg.Log.Level, cfg.Log.Format, isTerminal(stderr), secrets)
	if err != nil {
		return nil, err
	}

	settings, err := mcpclient.LoadSettingsFile(cfg.AgentDir)
	if err != nil {
		return nil, err
	}
	servers := mcpclient.MergeServers(logger, cfg.MCPServers, nil, settings)
	for _, s := range servers {
		// Secrets written literally into a server's env are known secrets too.
		secrets.Add(redact.ExplicitSecrets(s.Env)...)
	}

	cache := mcpclient.NewCatalogCache(mcpclient.CatalogCacheOptions{
		Env:           env,
		Redactor:      secrets,
		Logger:        logger,
		ClientName:    "volcanicbot",
		ClientVersion: version,
	})
	client := mcpclient.New(mcpclient.Options{
		Servers:       servers,
		Cache:         cache,
		Env:           env,
		Redactor:      secrets,
		Logger:        logger,
		Builtins:      builtinTools,
		ClientName:    "volcanicbot",
		ClientVersion: version,
	})
	return &Main{cfg: cfg, logger: logger, secrets: secrets, env: env, cache: cache, mcp: client}, nil
}

// Run starts the bot's components. It returns once they run.
func (m *Main) Run(ctx context.Context) error {
	if err := m.cfg.Validate(true); err != nil {
		return err
	}
	if len(m.cfg.Telegram.AllowedUsers) == 0 {
		m.logger.Warn("TELEGRAM_ALLOWED_USERS is empty: the bot answers nobody")
	}
	servers := m.mcp.Servers()
	m.logger.Info("volcanicbot starting", "version", version, "data_dir", m.cfg.DataDir, "mcp_servers", len(servers))
	// The catalogue is built in the background: a slow server must not
	// hold up the bot.
	go func() {
		tools, refusals := m.mcp.Tools(ctx)
		m.logger.Info("MCP catalogue ready", "tools", len(tools), "refused", len(refusals))
	}()
	return nil
}

// Close stops every MCP process. Safe to call more than once.
func (m *Main) Close() {
	m.mcp.Close()
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
