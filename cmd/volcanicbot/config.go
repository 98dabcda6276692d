package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/spend"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
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

	LLM    LLMConfig
	Speech SpeechConfig
	Agent  AgentConfig
	Log    LogConfig
	// Playwright is the browser preset's settings (mcp.playwright.*).
	Playwright preset.Playwright

	// HTTPAddr is the optional health listener (/healthz, the webhook),
	// e.g. ":8080".
	HTTPAddr string
	// MetricsAddr is the optional metrics listener (/metrics), apart from
	// HTTPAddr, which a webhook's domain exposes.
	MetricsAddr string
	// PublicURL is the bot's public origin in front of HTTPAddr (the live
	// view's links); "" falls back to the webhook's origin.
	PublicURL string
	// HandoffTimeout is how long browser_handoff waits for Done.
	HandoffTimeout time.Duration

	// MaxResultTokens caps what the model gets of one tool result.
	MaxResultTokens int
	// MemoryLimitMiB is the memory the bot and its servers may use, the
	// budget their default ceilings are sized from; 0: the cgroup's
	// limit, else the RAM.
	MemoryLimitMiB int

	// ChatDiskBudgetMB is each chat's budget for the files the bot and its
	// servers generate, in MiB (session.DefaultDiskBudget when unset).
	ChatDiskBudgetMB int

	// Schedule is the scheduled tasks' limits (schedule.*).
	Schedule ScheduleConfig

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
	// Admins are Telegram user ids allowed too, who decide in groups and
	// pair new users.
	Admins []int64
	// APIURL is the Bot API base URL without a trailing slash.
	APIURL string
	// WebhookURL switches from long polling to a webhook served on
	// HTTP_ADDR at the URL's path; empty: long polling.
	WebhookURL string
	// WebhookSecret is the token Telegram sends with each post; random
	// per start when empty.
	WebhookSecret string
	// LocalFilesDir is a local Bot API server's --dir as mounted here
	// (absolute): files it names by a path on its disk are read from it.
	// Empty: none.
	LocalFilesDir string
	// MaxFileMB bounds the files read from LocalFilesDir, in MiB; 0: the
	// server's own limit (telegram.MaxLocalFile, 2,000 MB).
	MaxFileMB int
}

// ScheduleConfig limits the chats' scheduled tasks.
type ScheduleConfig struct {
	// MaxJobsPerChat is how many tasks that still run a chat may have.
	MaxJobsPerChat int
	// MinInterval is the shortest `every` and gap between cron runs.
	MinInterval time.Duration
	// MaxTokensPerRun caps what one run may spend.
	MaxTokensPerRun int
	// Zone is the time zone of a chat that set none with /tz (TZ); "":
	// UTC.
	Zone string
}

// LLMConfig selects the model and its endpoint.
type LLMConfig struct {
	Provider string // "openai", "anthropic" or "" (lower-cased)
	// Model is the default model: LLM_MODEL, else the first of
	// LLM_MODELS.
	Model string
	// Models are the models a chat may pick (/model), the default
	// first: LLM_MODELS (LLM_MODEL, when set too, moved first), else
	// LLM_MODEL alone.
	Models           []string
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
	// NoSummaries trims a conversation over the budget instead of
	// summarising its oldest turns (LLM_SUMMARIES=false).
	NoSummaries bool
	// ToolSearch is when MCP tools are offered on demand through the
	// tool_search tool: auto (the default), on or off.
	ToolSearch session.ToolSearch
	// DailyTokensPerChat and DailyTokensPerUser are the spend allowance:
	// tokens a UTC day; 0 is none.
	DailyTokensPerChat, DailyTokensPerUser int64
	// PriceInputPerMTok and PriceOutputPerMTok price a million tokens of
	// the default model, for /usage; 0 is unknown.
	PriceInputPerMTok, PriceOutputPerMTok float64
	// Prices are every priced model's (LLM_PRICES, and the default
	// model's from LLM_PRICE_*_PER_MTOK).
	Prices map[string]spend.Price
	// DailyUSDPerChat and DailyUSDPerUser are the spend allowance in
	// dollars a UTC day; 0 is none.
	DailyUSDPerChat, DailyUSDPerUser float64
}

// AgentConfig shapes the agent loop.
type AgentConfig struct {
	// SystemPrompt replaces the default system prompt when set (from
	// SYSTEM_PROMPT, or read from SYSTEM_PROMPT_FILE).
	SystemPrompt string
	// MaxSteps caps model calls per turn.
	MaxSteps int
	// ApprovalTimeout is how long a tool call waits for a user's
	// approval before it is denied.
	ApprovalTimeout time.Duration
	// NoStream sends answers when they are complete instead of showing
	// them while they are written (STREAM_REPLIES=false).
	NoStream bool
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
	defaultApprovalSecs   = 300
	defaultHandoffSecs    = 600
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
//	telegram.admins               TELEGRAM_ADMINS            none; a list of ids, or "1,2"
//	telegram.api_url              TELEGRAM_API_URL           https://api.telegram.org
//	telegram.webhook_url          TELEGRAM_WEBHOOK_URL       none (long polling)
//	telegram.webhook_secret       TELEGRAM_WEBHOOK_SECRET    random per start
//	telegram.local_files_dir      TELEGRAM_LOCAL_FILES_DIR   none (files over HTTP, up to 20 MB)
//	telegram.max_file_mb          TELEGRAM_MAX_FILE_MB       2000 (with TELEGRAM_LOCAL_FILES_DIR only)
//	data_dir                      VOLCANIC_DATA_DIR          ./data
//	agent_dir                     VOLCANIC_AGENT_DIR         ~/.volcanic/agent
//	llm.provider                  LLM_PROVIDER               openai | anthropic
//	llm.model                     LLM_MODEL                  the first of LLM_MODELS
//	llm.models                    LLM_MODELS                 LLM_MODEL alone; a list, or "a,b"
//	llm.openai.api_key            OPENAI_API_KEY
//	llm.openai.base_url           OPENAI_BASE_URL
//	llm.anthropic.api_key         ANTHROPIC_API_KEY
//	llm.anthropic.base_url        ANTHROPIC_BASE_URL
//	llm.anthropic.auth_header     ANTHROPIC_AUTH_HEADER      x-api-key | bearer
//	llm.anthropic.version         ANTHROPIC_VERSION          2023-06-01
//	llm.max_tokens                LLM_MAX_TOKENS             the provider adapter's default
//	llm.context_tokens            LLM_CONTEXT_TOKENS         100000
//	llm.summaries                 LLM_SUMMARIES              true
//	llm.tool_search               LLM_TOOL_SEARCH            auto | on | off
//	llm.daily_tokens_per_chat     LLM_DAILY_TOKENS_PER_CHAT  0 (no allowance)
//	llm.daily_tokens_per_user     LLM_DAILY_TOKENS_PER_USER  0 (no allowance)
//	llm.price_input_per_mtok      LLM_PRICE_INPUT_PER_MTOK   none (no cost shown)
//	llm.price_output_per_mtok     LLM_PRICE_OUTPUT_PER_MTOK  none (no cost shown)
//	llm.prices                    LLM_PRICES                 none; "model=input/cached/output,…" per million tokens
//	llm.daily_usd_per_chat        LLM_DAILY_USD_PER_CHAT     0 (no allowance)
//	llm.daily_usd_per_user        LLM_DAILY_USD_PER_USER     0 (no allowance)
//	agent.system_prompt           SYSTEM_PROMPT              the built-in prompt
//	agent.system_prompt_file      SYSTEM_PROMPT_FILE         (read at start; SYSTEM_PROMPT wins)
//	agent.max_steps               AGENT_MAX_STEPS            40
//	approval.timeout_seconds      APPROVAL_TIMEOUT_SECONDS   300
//	agent.stream_replies          STREAM_REPLIES             true
//	stt.base_url                  STT_BASE_URL               OPENAI_BASE_URL's endpoint with LLM_PROVIDER=openai, else none
//	stt.api_key                   STT_API_KEY                OPENAI_API_KEY, for the OpenAI endpoint itself only
//	stt.model                     STT_MODEL                  whisper-1
//	stt.max_seconds               STT_MAX_SECONDS            600
//	tts.base_url                  TTS_BASE_URL               as stt.base_url
//	tts.api_key                   TTS_API_KEY                as stt.api_key
//	tts.model                     TTS_MODEL                  tts-1
//	tts.voice                     TTS_VOICE                  alloy
//	tts.default                   TTS_DEFAULT                false (a chat turns voice answers on with /voice on)
//	http_addr                     HTTP_ADDR                  none (no health listener)
//	public_url                    PUBLIC_URL                 TELEGRAM_WEBHOOK_URL's origin; none: no browser hand-off
//	handoff.timeout_seconds       HANDOFF_TIMEOUT_SECONDS    600
//	metrics_addr                  METRICS_ADDR               none (no metrics listener); 127.0.0.1:9464 in the image
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
//	mcp.playwright.max_browsers   PLAYWRIGHT_MAX_BROWSERS    from the memory budget (mcpclient.SizeCeilings)
//	mcp.playwright.shared         PLAYWRIGHT_SHARED          true, unless chats of an earlier version keep browser profiles
//	mcp.playwright.cdp_endpoint   PLAYWRIGHT_CDP_ENDPOINT    none: the browsers run here
//	mcp.playwright.cdp_header     PLAYWRIGHT_CDP_HEADER      "Name: value", sent to the CDP endpoint
//	mcp.playwright.allow_unsafe_code PLAYWRIGHT_ALLOW_UNSAFE_CODE false: browser_run_code_unsafe hidden
//	mcp.max_result_tokens         MCP_MAX_RESULT_TOKENS      25000
//	memory_limit_mib              VOLCANIC_MEMORY_LIMIT_MIB  the cgroup's memory limit, else the RAM
//	chat_disk_budget_mb           CHAT_DISK_BUDGET_MB        256
//	schedule.max_jobs_per_chat    SCHEDULE_MAX_JOBS_PER_CHAT 20
//	schedule.min_interval_seconds SCHEDULE_MIN_INTERVAL_SECONDS 60
//	schedule.max_tokens_per_run   SCHEDULE_MAX_TOKENS_PER_RUN 20000
//	schedule.time_zone            TZ                         UTC (a chat sets its own with /tz)
//	mcp.servers.<name>.<field>    MCP__SERVERS__<NAME>__<FIELD>
//
// The config file itself is VOLCANIC_CONFIG. Server entries take the
// settings.json shape (command, args, env, cwd, toolPrefix, enabled, …);
// their field names match ignoring case, underscores and dashes, so
// toolPrefix, toolprefix, tool_prefix and tool-prefix are one field.
var configKeys = []configKey{
	{"telegram.bot_token", "TELEGRAM_BOT_TOKEN"},
	{"telegram.allowed_users", "TELEGRAM_ALLOWED_USERS"},
	{"telegram.admins", "TELEGRAM_ADMINS"},
	{"telegram.api_url", "TELEGRAM_API_URL"},
	{"telegram.webhook_url", "TELEGRAM_WEBHOOK_URL"},
	{"telegram.webhook_secret", "TELEGRAM_WEBHOOK_SECRET"},
	{"telegram.local_files_dir", "TELEGRAM_LOCAL_FILES_DIR"},
	{"telegram.max_file_mb", "TELEGRAM_MAX_FILE_MB"},
	{"data_dir", "VOLCANIC_DATA_DIR"},
	{"agent_dir", "VOLCANIC_AGENT_DIR"},
	{"llm.provider", "LLM_PROVIDER"},
	{"llm.model", "LLM_MODEL"},
	{"llm.models", "LLM_MODELS"},
	{"llm.openai.api_key", "OPENAI_API_KEY"},
	{"llm.openai.base_url", "OPENAI_BASE_URL"},
	{"llm.anthropic.api_key", "ANTHROPIC_API_KEY"},
	{"llm.anthropic.base_url", "ANTHROPIC_BASE_URL"},
	{"llm.anthropic.auth_header", "ANTHROPIC_AUTH_HEADER"},
	{"llm.anthropic.version", "ANTHROPIC_VERSION"},
	{"llm.max_tokens", "LLM_MAX_TOKENS"},
	{"llm.context_tokens", "LLM_CONTEXT_TOKENS"},
	{"llm.summaries", "LLM_SUMMARIES"},
	{"llm.tool_search", "LLM_TOOL_SEARCH"},
	{"llm.daily_tokens_per_chat", "LLM_DAILY_TOKENS_PER_CHAT"},
	{"llm.daily_tokens_per_user", "LLM_DAILY_TOKENS_PER_USER"},
	{"llm.price_input_per_mtok", "LLM_PRICE_INPUT_PER_MTOK"},
	{"llm.price_output_per_mtok", "LLM_PRICE_OUTPUT_PER_MTOK"},
	{"llm.prices", "LLM_PRICES"},
	{"llm.daily_usd_per_chat", "LLM_DAILY_USD_PER_CHAT"},
	{"llm.daily_usd_per_user", "LLM_DAILY_USD_PER_USER"},
	{"agent.system_prompt", "SYSTEM_PROMPT"},
	{"agent.system_prompt_file", "SYSTEM_PROMPT_FILE"},
	{"agent.max_steps", "AGENT_MAX_STEPS"},
	{"approval.timeout_seconds", "APPROVAL_TIMEOUT_SECONDS"},
	{"agent.stream_replies", "STREAM_REPLIES"},
	{"stt.base_url", "STT_BASE_URL"},
	{"stt.api_key", "STT_API_KEY"},
	{"stt.model", "STT_MODEL"},
	{"stt.max_seconds", "STT_MAX_SECONDS"},
	{"tts.base_url", "TTS_BASE_URL"},
	{"tts.api_key", "TTS_API_KEY"},
	{"tts.model", "TTS_MODEL"},
	{"tts.voice", "TTS_VOICE"},
	{"tts.default", "TTS_DEFAULT"},
	{"http_addr", "HTTP_ADDR"},
	{"metrics_addr", "METRICS_ADDR"},
	{"public_url", "PUBLIC_URL"},
	{"handoff.timeout_seconds", "HANDOFF_TIMEOUT_SECONDS"},
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
	{"mcp.playwright.max_browsers", "PLAYWRIGHT_MAX_BROWSERS"},
	{"mcp.playwright.shared", "PLAYWRIGHT_SHARED"},
	{"mcp.playwright.cdp_endpoint", "PLAYWRIGHT_CDP_ENDPOINT"},
	{"mcp.playwright.cdp_header", "PLAYWRIGHT_CDP_HEADER"},
	{"mcp.playwright.allow_unsafe_code", "PLAYWRIGHT_ALLOW_UNSAFE_CODE"},
	{"mcp.max_result_tokens", "MCP_MAX_RESULT_TOKENS"},
	{"memory_limit_mib", "VOLCANIC_MEMORY_LIMIT_MIB"},
	{"chat_disk_budget_mb", "CHAT_DISK_BUDGET_MB"},
	{"schedule.max_jobs_per_chat", "SCHEDULE_MAX_JOBS_PER_CHAT"},
	{"schedule.min_interval_seconds", "SCHEDULE_MIN_INTERVAL_SECONDS"},
	{"schedule.max_tokens_per_run", "SCHEDULE_MAX_TOKENS_PER_RUN"},
	{"schedule.time_zone", "TZ"},
}

// fileWins reports whether the config file beats the environment for key:
// the Playwright preset's settings, as the reference design has it
// ("values from config win over the environment"), so a compose file that
// passes every PLAYWRIGHT_* variable through cannot undo a configured
// preset. For every other key the environment wins.
func fileWins(key string) bool { return strings.HasPrefix(key, "mcp.playwright.") }

// configFileVar names the config file.
const configFileVar = "VOLCANIC_CONFIG"

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
	switch t := c.Telegram; {
	case t.MaxFileMB > 0 && t.LocalFilesDir == "":
		errs = append(errs, errors.New("TELEGRAM_MAX_FILE_MB (telegram.max_file_mb) bounds the files read from a local Bot API server: "+
			"it needs TELEGRAM_LOCAL_FILES_DIR (telegram.local_files_dir); without one Telegram's own limit, 20 MB, holds"))
	case t.MaxFileMB > telegram.MaxLocalFile>>20:
		errs = append(errs, fmt.Errorf("TELEGRAM_MAX_FILE_MB (telegram.max_file_mb) must be at most %d, the local Bot API server's own limit (got %d)",
			telegram.MaxLocalFile>>20, t.MaxFileMB))
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.HTTPAddr {
		errs = append(errs, errors.New("METRICS_ADDR (metrics_addr) must differ from HTTP_ADDR (http_addr): "+
			"a webhook's domain exposes HTTP_ADDR to the internet, and /metrics is not for it (e.g. METRICS_ADDR=127.0.0.1:9464)"))
	}
	errs = append(errs, c.validateBrowser()...)
	errs = append(errs, c.validatePublicURL()...)
	errs = append(errs, c.validateSpeech()...)
	if _, err := parseLogLevel(c.Log.Level); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseLogFormat(c.Log.Format); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateBrowser checks the browser service settings: a CDP endpoint is
// an http(s) or ws(s) URL with a host, its header "Name: value", and the
// endpoint needs the shared browser (it is one browser for every chat).
func (c *Config) validateBrowser() []error {
	p := c.Playwright
	var errs []error
	if p.CDPEndpoint != "" {
		u, err := url.Parse(p.CDPEndpoint)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("PLAYWRIGHT_CDP_ENDPOINT (mcp.playwright.cdp_endpoint): %v", redactURL(err.Error(), p.CDPEndpoint)))
		case u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss"):
			errs = append(errs, errors.New("PLAYWRIGHT_CDP_ENDPOINT (mcp.playwright.cdp_endpoint) must be an http://, https://, ws:// or wss:// URL with a host, "+
				"such as http://chromium:9222 or wss://chrome.browserless.io?token=…"))
		case u.Query().Has("token") && u.Query().Get("token") == "":
			// compose.browser.yaml's default with BROWSER_TOKEN unset: the
			// browser service would take anyone on its network.
			errs = append(errs, errors.New("PLAYWRIGHT_CDP_ENDPOINT (mcp.playwright.cdp_endpoint) has an empty token: set it "+
				"(with compose.browser.yaml: BROWSER_TOKEN, a random string, which the browser service requires too)"))
		}
		if p.Shared != nil && !*p.Shared {
			errs = append(errs, errors.New("PLAYWRIGHT_CDP_ENDPOINT (mcp.playwright.cdp_endpoint) is one browser for every chat: it needs PLAYWRIGHT_SHARED (mcp.playwright.shared) true or unset"))
		}
	}
	if p.CDPHeader != "" {
		name, _, ok := strings.Cut(p.CDPHeader, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n") {
			errs = append(errs, errors.New(`PLAYWRIGHT_CDP_HEADER (mcp.playwright.cdp_header) must be "Name: value", such as "Authorization: Bearer …"`))
		}
		if p.CDPEndpoint == "" {
			errs = append(errs, errors.New("PLAYWRIGHT_CDP_HEADER (mcp.playwright.cdp_header) is sent to PLAYWRIGHT_CDP_ENDPOINT, which is not set"))
		}
	}
	return errs
}

// redactURL hides the secrets of raw (its password, its token parameters)
// in msg.
func redactURL(msg, raw string) string {
	for _, s := range redact.URLSecrets(raw) {
		msg = strings.ReplaceAll(msg, s, "[REDACTED]")
	}
	return msg
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
	case strings.HasPrefix(u.Path, liveview.PathPrefix):
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) cannot use a path under /live/, the browser hand-off's"))
	}
	if c.HTTPAddr == "" {
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL (telegram.webhook_url) needs HTTP_ADDR (http_addr): the webhook is served on that listener"))
	}
	if s := t.WebhookSecret; s != "" && !telegram.ValidWebhookSecret(s) {
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
