package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
)

// Config is the bot's configuration: the config file named by
// VOLCANIC_CONFIG (optional) and the environment, which wins over the file
// key by key, except for the Playwright preset's keys, where the file wins. An empty variable counts as unset. See configKeys for the
// mapping between the two.
type Config struct {
	// ConfigFile is the file that was read, "" when none.
	ConfigFile string

	Telegram TelegramConfig
	// DataDir is the root of all state (chats/<chat id>/ under it).
	DataDir string
	// AgentDir holds the user settings.json with mcpServers; ~ expanded.
	AgentDir string

	LLM   LLMConfig
	Agent AgentConfig
	Log   LogConfig
	// Playwright is the browser preset's settings (mcp.playwright.*).
	Playwright preset.Playwright

	// HTTPAddr is the optional health listener (/healthz), e.g. ":8080".
	HTTPAddr string

	// MCPServers is the config-file source (mcp.servers.<name> and the
	// MCP__SERVERS__<NAME>__<FIELD> variables), sorted with
	// mcpconfig.SortServers. The preset and settings.json are merged later.
	MCPServers []mcpconfig.ServerConfig
}

// TelegramConfig is the Bot API connection and the allowlist.
type TelegramConfig struct {
	Token string
	// AllowedUsers are Telegram user ids; empty means nobody.
	AllowedUsers []int64
	// APIURL is the Bot API base URL without a trailing slash.
	APIURL string
	// WebhookURL switches from long polling to a webhook served on
	// HTTP_ADDR at the URL's path; empty: long polling.
	WebhookURL string
	// WebhookSecret is the token Telegram sends with each post; random
	// per start when empty.
	WebhookSecret string
}

// LLMConfig selects the model and its endpoint.
type LLMConfig struct {
	Provider         string // "openai", "anthropic" or "" (lower-cased)
	Model            string
	OpenAIKey        string
	OpenAIBaseURL    string
	AnthropicKey     string
	AnthropicBaseURL string
	// AnthropicAuthHeader is "x-api-key" (default) or "bearer", for
	// Anthropic-compatible third parties.
	AnthropicAuthHeader string
	// AnthropicVersion is the anthropic-version header (default 2023-06-01).
	AnthropicVersion string
	// MaxTokens caps each answer; 0 is the adapter's default.
	MaxTokens int
	// ContextTokens bounds each request (the context budget).
	ContextTokens int
}

// AgentConfig shapes the agent loop.
type AgentConfig struct {
	// SystemPrompt replaces the default system prompt when set (from
	// SYSTEM_PROMPT, or read from SYSTEM_PROMPT_FILE).
	SystemPrompt string
	// MaxSteps caps model calls per turn.
	MaxSteps int
}

// LogConfig is LOG_LEVEL and LOG_FORMAT, lower-cased; validated by Validate
// and NewLogger.
type LogConfig struct {
	Level  string
	Format string
}

// Defaults.
const (
	defaultTelegramAPIURL = "https://api.telegram.org"
	defaultDataDir        = "./data"
	defaultAgentDir       = "~/.volcanic/agent"
	defaultLogLevel       = "info"
	defaultLogFormat      = logFormatText
	defaultContextTokens  = 100_000
	defaultMaxSteps       = 40
)

// configKey binds a config-file key (viper's dotted, case-insensitive path)
// to its environment variable.
type configKey struct {
	key string
	env string
}

// configKeys is the mapping between config-file keys and variables:
//
//	config file key               environment variable       default
//	telegram.bot_token            TELEGRAM_BOT_TOKEN         (required by run)
//	telegram.allowed_users        TELEGRAM_ALLOWED_USERS     none (nobody); a list of ids, or "1,2"
//	telegram.api_url              TELEGRAM_API_URL           https://api.telegram.org
//	telegram.webhook_url          TELEGRAM_WEBHOOK_URL       none (long polling)
//	telegram.webhook_secret       TELEGRAM_WEBHOOK_SECRET    random per start
//	data_dir                      VOLCANIC_DATA_DIR          ./data
//	agent_dir                     VOLCANIC_AGENT_DIR         ~/.volcanic/agent
//	llm.provider                  LLM_PROVIDER               openai | anthropic
//	llm.model                     LLM_MODEL
//	llm.openai.api_key            OPENAI_API_KEY
//	llm.openai.base_url           OPENAI_BASE_URL
//	llm.anthropic.api_key         ANTHROPIC_API_KEY
//	llm.anthropic.base_url        ANTHROPIC_BASE_URL
//	llm.anthropic.auth_header     ANTHROPIC_AUTH_HEADER      x-api-key | bearer
//	llm.anthropic.version         ANTHROPIC_VERSION          2023-06-01
//	llm.max_tokens                LLM_MAX_TOKENS             the provider adapter's default
//	llm.context_tokens            LLM_CONTEXT_TOKENS         100000
//	agent.system_prompt           SYSTEM_PROMPT              the built-in prompt
//	agent.system_prompt_file      SYSTEM_PROMPT_FILE         (read at start; SYSTEM_PROMPT wins)
//	agent.max_steps               AGENT_MAX_STEPS            40
//	http_addr                     HTTP_ADDR                  none (no health listener)
//	log.level                     LOG_LEVEL                  info
//	log.format                    LOG_FORMAT                 text
//	mcp.playwright.enabled        PLAYWRIGHT_ENABLED
//	mcp.playwright.headless       PLAYWRIGHT_HEADLESS
//	mcp.playwright.browser        PLAYWRIGHT_BROWSER
//	mcp.playwright.extra_args     PLAYWRIGHT_EXTRA_ARGS      a list, or a shell-style string
//	mcp.playwright.command        PLAYWRIGHT_COMMAND
//	mcp.playwright.package        PLAYWRIGHT_PACKAGE
//	mcp.playwright.executable_path PLAYWRIGHT_EXECUTABLE_PATH
//	mcp.playwright.no_sandbox     PLAYWRIGHT_NO_SANDBOX
//	mcp.servers.<name>.<field>    MCP__SERVERS__<NAME>__<FIELD>
//
// The config file itself is VOLCANIC_CONFIG. Server entries take the
// settings.json shape (command, args, env, cwd, toolPrefix, enabled, …);
// their field names match ignoring case, underscores and dashes, so
// toolPrefix, toolprefix, tool_prefix and tool-prefix are one field.
var configKeys = []configKey{
	{"telegram.bot_token", "TELEGRAM_BOT_TOKEN"},
	{"telegram.allowed_users", "TELEGRAM_ALLOWED_USERS"},
	{"telegram.api_url", "TELEGRAM_API_URL"},
	{"telegram.webhook_url", "TELEGRAM_WEBHOOK_URL"},
	{"telegram.webhook_secret", "TELEGRAM_WEBHOOK_SECRET"},
	{"data_dir", "VOLCANIC_DATA_DIR"},
	{"agent_dir", "VOLCANIC_AGENT_DIR"},
	{"llm.provider", "LLM_PROVIDER"},
	{"llm.model", "LLM_MODEL"},
	{"llm.openai.api_key", "OPENAI_API_KEY"},
	{"llm.openai.base_url", "OPENAI_BASE_URL"},
	{"llm.anthropic.api_key", "ANTHROPIC_API_KEY"},
	{"llm.anthropic.base_url", "ANTHROPIC_BASE_URL"},
	{"llm.anthropic.auth_header", "ANTHROPIC_AUTH_HEADER"},
	{"llm.anthropic.version", "ANTHROPIC_VERSION"},
	{"llm.max_tokens", "LLM_MAX_TOKENS"},
	{"llm.context_tokens", "LLM_CONTEXT_TOKENS"},
	{"agent.system_prompt", "SYSTEM_PROMPT"},
	{"agent.system_prompt_file", "SYSTEM_PROMPT_FILE"},
	{"agent.max_steps", "AGENT_MAX_STEPS"},
	{"http_addr", "HTTP_ADDR"},
	{"log.level", "LOG_LEVEL"},
	{"log.format", "LOG_FORMAT"},
	{"mcp.playwright.enabled", "PLAYWRIGHT_ENABLED"},
	{"mcp.playwright.headless", "PLAYWRIGHT_HEADLESS"},
	{"mcp.playwright.browser", "PLAYWRIGHT_BROWSER"},
	{"mcp.playwright.extra_args", "PLAYWRIGHT_EXTRA_ARGS"},
	{"mcp.playwright.command", "PLAYWRIGHT_COMMAND"},
	{"mcp.playwright.package", "PLAYWRIGHT_PACKAGE"},
	{"mcp.playwright.executable_path", "PLAYWRIGHT_EXECUTABLE_PATH"},
	{"mcp.playwright.no_sandbox", "PLAYWRIGHT_NO_SANDBOX"},
}

// fileWins reports whether the config file beats the environment for key:
// the Playwright preset's settings, as the reference design has it
// ("values from config win over the environment"), so a compose file that
// passes every PLAYWRIGHT_* variable through cannot undo a configured
// preset. For every other key the environment wins.
func fileWins(key string) bool { return strings.HasPrefix(key, "mcp.playwright.") }

// configFileVar names the config file.
const configFileVar = "VOLCANIC_CONFIG"

// LoadConfig reads the configuration from the config file named by
// VOLCANIC_CONFIG (YAML, JSON or TOML, by extension; a named file that is
// missing is an error) and the environment: getenv for the documented
// variables, environ ("NAME=value" entries) for MCP__SERVERS__… ones. It
// does not touch the process environment or global viper state. Every
// error found is returned, joined.
func LoadConfig(getenv func(string) (string, bool), environ []string) (*Config, error) {
	lookup := func(name string) (string, bool) {
		v, ok := getenv(name)
		return v, ok && v != "" // docker compose passes unset variables through empty
	}

	l := &configLoader{v: viper.New(), fromEnv: map[string]string{}}
	var raw map[string]any
	if path, ok := lookup(configFileVar); ok {
		var err error
		if raw, err = l.readFile(path); err != nil {
			return nil, err
		}
	}
	l.checkKeys()
	for _, k := range configKeys {
		if val, ok := lookup(k.env); ok {
			if fileWins(k.key) && l.v.IsSet(k.key) {
				continue
			}
			l.v.Set(k.key, val)
			l.fromEnv[k.key] = k.env
		}
	}

	c := &Config{ConfigFile: l.file}
	c.Telegram.Token = l.str("telegram.bot_token")
	c.Telegram.AllowedUsers = l.userIDs("telegram.allowed_users")
	c.Telegram.APIURL = l.apiURL("telegram.api_url")
	c.Telegram.WebhookURL = l.str("telegram.webhook_url")
	c.Telegram.WebhookSecret = l.str("telegram.webhook_secret")
	c.DataDir = l.dir("data_dir", defaultDataDir, lookup)
	c.AgentDir = l.dir("agent_dir", defaultAgentDir, lookup)
	c.LLM = LLMConfig{
		Provider:            strings.ToLower(l.str("llm.provider")),
		Model:               l.str("llm.model"),
		OpenAIKey:           l.str("llm.openai.api_key"),
		OpenAIBaseURL:       l.str("llm.openai.base_url"),
		AnthropicKey:        l.str("llm.anthropic.api_key"),
		AnthropicBaseURL:    l.str("llm.anthropic.base_url"),
		AnthropicAuthHeader: strings.ToLower(l.str("llm.anthropic.auth_header")),
		AnthropicVersion:    l.str("llm.anthropic.version"),
		MaxTokens:           l.positiveInt("llm.max_tokens", 0),
		ContextTokens:       l.positiveInt("llm.context_tokens", defaultContextTokens),
	}
	c.Agent = AgentConfig{
		SystemPrompt: l.systemPrompt("agent.system_prompt", "agent.system_prompt_file"),
		MaxSteps:     l.positiveInt("agent.max_steps", defaultMaxSteps),
	}
	c.HTTPAddr = l.str("http_addr")
	c.Log = LogConfig{
		Level:  strings.ToLower(cmp.Or(l.str("log.level"), defaultLogLevel)),
		Format: strings.ToLower(cmp.Or(l.str("log.format"), defaultLogFormat)),
	}
	c.Playwright = preset.Playwright{
		Enabled:        l.boolean("mcp.playwright.enabled"),
		Headless:       l.boolean("mcp.playwright.headless"),
		Browser:        l.str("mcp.playwright.browser"),
		ExtraArgs:      l.args("mcp.playwright.extra_args"),
		Command:        l.str("mcp.playwright.command"),
		Package:        l.str("mcp.playwright.package"),
		ExecutablePath: l.str("mcp.playwright.executable_path"),
		NoSandbox:      l.boolean("mcp.playwright.no_sandbox"),
	}
	servers, err := mcpconfig.FromConfigFile(mcpServersSection(raw), environ, "config "+l.file)
	if err != nil {
		l.errs = append(l.errs, err)
	}
	c.MCPServers = servers

	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return c, nil
}

// Validate checks what LoadConfig leaves to the caller: the bot token
// (required to run the bot, not to check the configuration), the LLM
// provider and the log settings.
func (c *Config) Validate(requireBot bool) error {
	var errs []error
	if requireBot && strings.TrimSpace(c.Telegram.Token) == "" {
		errs = append(errs, errors.New("TELEGRAM_BOT_TOKEN (telegram.bot_token) is required to run the bot"))
	}
	switch c.LLM.Provider {
	case "", "openai", "anthropic":
	default:
		errs = append(errs, fmt.Errorf("LLM_PROVIDER (llm.provider) must be openai or anthropic (got %q)", c.LLM.Provider))
	}
	switch c.LLM.AnthropicAuthHeader {
	case "", "x-api-key", "bearer":
	default:
		errs = append(errs, fmt.Errorf("ANTHROPIC_AUTH_HEADER (llm.anthropic.auth_header) must be x-api-key or bearer (got %q)", c.LLM.AnthropicAuthHeader))
	}
	errs = append(errs, c.validateWebhook()...)
	if _, err := parseLogLevel(c.Log.Level); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseLogFormat(c.Log.Format); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// configLoader reads typed values out of one viper instance and collects
// errors.
type configLoader struct {
	v       *viper.Viper
	file    string
	fromEnv map[string]string // key → the variable that set it
	errs    []error
}

func (l *configLoader) errorf(key, format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf("%s: "+format, append([]any{l.label(key)}, args...)...))
}

// label names where key's value came from: its variable, or the file and key.
func (l *configLoader) label(key string) string {
	if env, ok := l.fromEnv[key]; ok {
		return env
	}
	return "config " + l.file + ": " + key
}

// readFile loads path into viper and returns its contents decoded with the
// keys' case preserved (viper lower-cases keys, and so server names).
func (l *configLoader) readFile(path string) (map[string]any, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "yaml", "yml", "json", "toml":
	default:
		return nil, fmt.Errorf("config file %s: unsupported extension %q (use .yaml, .yml, .json or .toml)", path, filepath.Ext(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	l.file = path
	dec, err := viper.NewCodecRegistry().Decoder(ext)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	raw := map[string]any{}
	if err := dec.Decode(data, raw); err != nil {
		return nil, fmt.Errorf("config file %s: %s", path, describeParseError(data, err))
	}
	l.v.SetConfigType(ext)
	if err := l.v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return raw, nil
}

// describeParseError adds the line and column to a JSON syntax error (YAML
// and TOML errors carry their own).
func describeParseError(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	i := min(max(int(se.Offset)-1, 0), len(data))
	line := bytes.Count(data[:i], []byte{'\n'}) + 1
	col := i - bytes.LastIndexByte(data[:i], '\n')
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
}

// checkKeys refuses keys of the config file that mean nothing to us, so a
// typo does not pass silently. A section left empty ("telegram:" with
// nothing under it) is fine. Server entries are checked by mcpconfig.
func (l *configLoader) checkKeys() {
	known, sections := map[string]bool{}, map[string]bool{"mcp.servers": true}
	for _, k := range configKeys {
		known[k.key] = true
		for i := range len(k.key) {
			if k.key[i] == '.' {
				sections[k.key[:i]] = true
			}
		}
	}
	var unknown []string
	for _, k := range l.v.AllKeys() {
		switch {
		case known[k], k == "mcp.servers", strings.HasPrefix(k, "mcp.servers."):
		case sections[k] && l.v.Get(k) == nil:
			// An empty section.
		case sections[k]:
			l.errs = append(l.errs, fmt.Errorf("config %s: %s must be a section of keys (got %v)", l.file, k, l.v.Get(k)))
		default:
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		l.errs = append(l.errs, fmt.Errorf("config %s: unknown key %q", l.file, k))
	}
}

// mcpServersSection returns the config file's mcp.servers value (keys
// matched ignoring case, as viper does), with the servers' names in the
// case they were written; nil when there is none.
func mcpServersSection(raw map[string]any) any {
	mcp, _ := lookupFold(raw, "mcp").(map[string]any)
	return lookupFold(mcp, "servers")
}

// lookupFold returns the value of m's key equal to key ignoring case,
// preferring an exact match, then the first in sorted order.
func lookupFold(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.EqualFold(k, key) {
			return m[k]
		}
	}
	return nil
}

// str returns key as a string, trimmed; scalars are formatted, lists and
// maps refused.
func (l *configLoader) str(key string) string {
	switch v := l.v.Get(key).(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v)
	default:
		l.errorf(key, "must be a string")
		return ""
	}
}

func (l *configLoader) boolean(key string) *bool {
	switch v := l.v.Get(key).(type) {
	case nil:
		return nil
	case bool:
		return &v
	case string:
		if strings.TrimSpace(v) == "" {
			return nil
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			l.errorf(key, "must be true or false (got %q)", v)
			return nil
		}
		return &b
	default:
		l.errorf(key, "must be true or false")
		return nil
	}
}

// positiveInt reads a positive integer; def when unset.
func (l *configLoader) positiveInt(key string, def int) int {
	var n int
	switch v := l.v.Get(key).(type) {
	case nil:
		return def
	case int:
		n = v
	case int64:
		n = int(v)
	case float64:
		n = int(v)
		if float64(n) != v {
			l.errorf(key, "must be a whole number (got %v)", v)
			return def
		}
	case string:
		var err error
		if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			l.errorf(key, "must be a whole number (got %q)", v)
			return def
		}
	default:
		l.errorf(key, "must be a whole number")
		return def
	}
	if n <= 0 {
		l.errorf(key, "must be positive (got %d)", n)
		return def
	}
	return n
}

// systemPrompt reads the prompt text, or the file named by fileKey.
func (l *configLoader) systemPrompt(key, fileKey string) string {
	if s := l.str(key); s != "" {
		return s
	}
	path := l.str(fileKey)
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		l.errorf(fileKey, "%v", err)
		return ""
	}
	if strings.TrimSpace(string(b)) == "" {
		l.errorf(fileKey, "%s is empty", path)
	}
	return string(b)
}

// userIDs reads a list of positive Telegram user ids: a list in the file,
// or a comma-separated string.
func (l *configLoader) userIDs(key string) []int64 {
	var items []string
	switch v := l.v.Get(key).(type) {
	case nil:
		return nil
	case string:
		items = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			items = append(items, fmt.Sprint(e))
		}
	case int, int64, uint64:
		items = []string{fmt.Sprint(v)}
	default:
		l.errorf(key, "must be a list of user ids")
		return nil
	}
	var ids []int64
	for _, s := range items {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			l.errorf(key, "invalid user id %q", s)
			continue
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// validateWebhook checks the webhook settings: an https URL (http only to
// this machine, for testing) whose path can be served next to /healthz,
// the listener it is served on, and a secret Telegram accepts.
func (c *Config) validateWebhook() []error {
	t := c.Telegram
	if t.WebhookURL == "" {
		if t.WebhookSecret != "" {
			return []error{errors.New("TELEGRAM_WEBHOOK_SECRET (telegram.webhook_secret) is set but TELEGRAM_WEBHOOK_URL is not")}
		}
		return nil
	}
	var errs []error
	u, err := url.Parse(t.WebhookURL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		errs = append(errs, fmt.Errorf("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) must be an https URL (got %q)", t.WebhookURL))
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		errs = append(errs, fmt.Errorf("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) must be https: Telegram posts only to https (got %q)", t.WebhookURL))
	case u.RawQuery != "" || u.Fragment != "" || !plainURLPath(u.EscapedPath()):
		errs = append(errs, fmt.Errorf("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) must have a plain path (letters, digits, / _ - . ~), no query (got %q)", t.WebhookURL))
	case u.Path == "/healthz":
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) cannot use the path /healthz, the health check's"))
	}
	if c.HTTPAddr == "" {
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) needs HTTP_ADDR (http_addr): the webhook is served on that listener"))
	}
	if s := t.WebhookSecret; s != "" && !bot.ValidWebhookSecret(s) {
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_SECRET (telegram.webhook_secret) must be 1–256 characters of A–Z, a–z, 0–9, _ and -"))
	}
	return errs
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// plainURLPath reports whether p is a path ServeMux takes literally.
func plainURLPath(p string) bool {
	for _, c := range p {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("/_-.~", c)) {
			return false
		}
	}
	return true
}

func (l *configLoader) apiURL(key string) string {
	s := l.str(key)
	if s == "" {
		return defaultTelegramAPIURL
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.errorf(key, "must be an http or https URL (got %q)", s)
		return ""
	}
	return strings.TrimRight(s, "/")
}

// dir reads a directory, expanding a leading ~ with HOME.
func (l *configLoader) dir(key, def string, lookup func(string) (string, bool)) string {
	p := l.str(key)
	if p == "" {
		p = def
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, ok := lookup("HOME")
		if !ok {
			l.errorf(key, "cannot expand ~ in %q: HOME is not set", p)
			return ""
		}
		p = filepath.Join(home, p[1:])
	}
	// Absolute, so that a chat's workspace means the same place to every
	// child process, whatever its working directory.
	abs, err := filepath.Abs(p)
	if err != nil {
		l.errorf(key, "%v", err)
		return filepath.Clean(p)
	}
	return abs
}

// args reads a list of strings, or a string split shell-style.
func (l *configLoader) args(key string) []string {
	switch v := l.v.Get(key).(type) {
	case nil:
		return nil
	case string:
		out, err := splitShellWords(v)
		if err != nil {
			l.errorf(key, "%v", err)
		}
		return out
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				l.errorf(key, "must be a list of strings")
				return nil
			}
			out = append(out, s)
		}
		return out
	default:
		l.errorf(key, "must be a list of strings")
		return nil
	}
}

// splitShellWords splits s at unquoted white space. Single quotes keep
// everything literally; within double quotes a backslash escapes " \ $ and
// `; outside quotes it escapes any character. --device "iPhone 15" is two
// words.
func splitShellWords(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			if quote == '"' && !strings.ContainsRune("\"\\$`", r) {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	case escaped:
		return nil, fmt.Errorf("trailing backslash in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
