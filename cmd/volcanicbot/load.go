package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

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
	l.setFromEnv(lookup)

	c := l.config(lookup)
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

// setFromEnv sets the keys whose variables are set, but for those the
// config file sets and wins (fileWins).
func (l *configLoader) setFromEnv(lookup func(string) (string, bool)) {
	for _, k := range configKeys {
		if val, ok := lookup(k.env); ok {
			if fileWins(k.key) && l.v.IsSet(k.key) {
				continue
			}
			l.v.Set(k.key, val)
			l.fromEnv[k.key] = k.env
		}
	}
}

// config reads every setting but the MCP servers, in the order their
// errors are reported.
func (l *configLoader) config(lookup func(string) (string, bool)) *Config {
	c := &Config{ConfigFile: l.file}
	c.Telegram.Token = l.str("telegram.bot_token")
	c.Telegram.AllowedUsers = l.userIDs("telegram.allowed_users")
	c.Telegram.Admins = l.userIDs("telegram.admins")
	c.Telegram.APIURL = l.apiURL("telegram.api_url")
	c.Telegram.WebhookURL = l.str("telegram.webhook_url")
	c.Telegram.WebhookSecret = l.str("telegram.webhook_secret")
	if l.str("telegram.local_files_dir") != "" {
		c.Telegram.LocalFilesDir = l.dir("telegram.local_files_dir", "", lookup)
	}
	c.Telegram.MaxFileMB = l.positiveInt("telegram.max_file_mb", 0)
	c.DataDir = l.dir("data_dir", defaultDataDir, lookup)
	c.AgentDir = l.dir("agent_dir", defaultAgentDir, lookup)
	c.LLM = l.llm()
	if summaries := l.boolean("llm.summaries"); summaries != nil && !*summaries {
		c.LLM.NoSummaries = true
	}
	c.Agent = AgentConfig{
		SystemPrompt: l.systemPrompt("agent.system_prompt", "agent.system_prompt_file"),
		MaxSteps:     l.positiveInt("agent.max_steps", defaultMaxSteps),

		ApprovalTimeout: time.Duration(l.positiveInt("approval.timeout_seconds", defaultApprovalSecs)) * time.Second,
	}
	if stream := l.boolean("agent.stream_replies"); stream != nil && !*stream {
		c.Agent.NoStream = true
	}
	c.HTTPAddr = l.str("http_addr")
	c.MetricsAddr = l.str("metrics_addr")
	c.PublicURL = l.str("public_url")
	c.HandoffTimeout = time.Duration(l.positiveInt("handoff.timeout_seconds", defaultHandoffSecs)) * time.Second
	c.Log = LogConfig{
		Level:  strings.ToLower(cmp.Or(l.str("log.level"), defaultLogLevel)),
		Format: strings.ToLower(cmp.Or(l.str("log.format"), defaultLogFormat)),
	}
	c.Playwright = l.playwright()
	c.Speech = l.speech()
	c.MaxResultTokens = l.positiveInt("mcp.max_result_tokens", mcpclient.DefaultMaxResultTokens)
	c.MemoryLimitMiB = l.positiveInt("memory_limit_mib", 0)
	c.ChatDiskBudgetMB = l.positiveInt("chat_disk_budget_mb", session.DefaultDiskBudget>>20)
	c.Schedule = l.schedule()
	return c
}

// schedule reads the schedule.* settings; a time zone no host knows is
// an error.
func (l *configLoader) schedule() ScheduleConfig {
	c := ScheduleConfig{
		MaxJobsPerChat:  l.positiveInt("schedule.max_jobs_per_chat", defaultMaxJobsPerChat),
		MinInterval:     time.Duration(l.positiveInt("schedule.min_interval_seconds", defaultMinIntervalSecs)) * time.Second,
		MaxTokensPerRun: l.positiveInt("schedule.max_tokens_per_run", session.DefaultMaxTokensPerRun),
		Zone:            l.str("schedule.time_zone"),
	}
	if c.Zone != "" {
		if _, err := (&schedule.Zones{}).Load(c.Zone); err != nil {
			l.errorf("schedule.time_zone", "unknown time zone %q (an IANA name such as Europe/Berlin)", c.Zone)
			c.Zone = ""
		}
	}
	return c
}

// The schedule's defaults.
const (
	defaultMaxJobsPerChat  = 20
	defaultMinIntervalSecs = 60
)

// llm reads the llm.* settings.
func (l *configLoader) llm() LLMConfig {
	c := LLMConfig{
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
		DailyTokensPerChat:  l.count("llm.daily_tokens_per_chat"),
		DailyTokensPerUser:  l.count("llm.daily_tokens_per_user"),
		PriceInputPerMTok:   l.price("llm.price_input_per_mtok"),
		PriceOutputPerMTok:  l.price("llm.price_output_per_mtok"),
		ToolSearch:          l.toolSearch("llm.tool_search"),
	}
	l.models(&c) // load_models.go
	return c
}

// playwright reads the mcp.playwright.* settings.
func (l *configLoader) playwright() preset.Playwright {
	p := preset.Playwright{
		Enabled:        l.boolean("mcp.playwright.enabled"),
		Headless:       l.boolean("mcp.playwright.headless"),
		Browser:        l.str("mcp.playwright.browser"),
		ExtraArgs:      l.args("mcp.playwright.extra_args"),
		Command:        l.str("mcp.playwright.command"),
		Package:        l.str("mcp.playwright.package"),
		ExecutablePath: l.str("mcp.playwright.executable_path"),
		NoSandbox:      l.boolean("mcp.playwright.no_sandbox"),
		MaxBrowsers:    l.positiveInt("mcp.playwright.max_browsers", 0),
		Shared:         l.boolean("mcp.playwright.shared"),
		CDPEndpoint:    l.str("mcp.playwright.cdp_endpoint"),
		CDPHeader:      l.str("mcp.playwright.cdp_header"),
	}
	if allow := l.boolean("mcp.playwright.allow_unsafe_code"); allow != nil {
		p.AllowUnsafeCode = *allow
	}
	return p
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

// count reads a whole number, 0 or more; 0 when unset.
func (l *configLoader) count(key string) int64 {
	var n int64
	switch v := l.v.Get(key).(type) {
	case nil:
		return 0
	case int:
		n = int64(v)
	case int64:
		n = v
	case float64:
		n = int64(v)
		if float64(n) != v {
			l.errorf(key, "must be a whole number (got %v)", v)
			return 0
		}
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			l.errorf(key, "must be a whole number of tokens, 0 for none (got %q)", v)
			return 0
		}
	default:
		l.errorf(key, "must be a whole number")
		return 0
	}
	if n < 0 {
		l.errorf(key, "must be 0 (none) or more (got %d)", n)
		return 0
	}
	return n
}

// price reads a price, a decimal number 0 or more; 0 when unset.
func (l *configLoader) price(key string) float64 {
	return l.decimal(key, "a price in dollars per million tokens, such as 3 or 0.15", "0 or more")
}

// decimal reads a decimal number 0 or more (0 when unset): what it must
// be, and its least, as a bad value's error says them.
func (l *configLoader) decimal(key, want, least string) float64 {
	var f float64
	switch v := l.v.Get(key).(type) {
	case nil:
		return 0
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case float64:
		f = v
	case string:
		var err error
		s := strings.TrimSpace(v)
		if f, err = strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "xXpP_") {
			l.errorf(key, "must be %s (got %q)", want, v)
			return 0
		}
	default:
		l.errorf(key, "must be a number")
		return 0
	}
	if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		l.errorf(key, "must be %s (got %v)", least, f)
		return 0
	}
	return f
}

// toolSearch reads auto, on or off (case-insensitive); auto when unset.
func (l *configLoader) toolSearch(key string) session.ToolSearch {
	s := strings.ToLower(l.str(key))
	if s == "" {
		return session.ToolSearchAuto
	}
	mode, ok := session.ParseToolSearch(s)
	if !ok {
		l.errorf(key, "must be auto, on or off (got %q)", s)
		return session.ToolSearchAuto
	}
	return mode
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

// list reads the items of a list: a list in the file, or a
// comma-separated string (a number too, when number: one item). Anything
// else is the error must (what it must be) and no items.
func (l *configLoader) list(key, must string, number bool) []string {
	switch v := l.v.Get(key).(type) {
	case nil:
		return nil
	case string:
		return strings.Split(v, ",")
	case []any:
		items := make([]string, 0, len(v))
		for _, e := range v {
			items = append(items, fmt.Sprint(e))
		}
		return items
	case int, int64, uint64:
		if number {
			return []string{fmt.Sprint(v)}
		}
	}
	l.errorf(key, "%s", must)
	return nil
}

// userIDs reads a list of positive Telegram user ids: a list in the file,
// or a comma-separated string.
func (l *configLoader) userIDs(key string) []int64 {
	items := l.list(key, "must be a list of user ids", true)
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
		quote   byte // 0, '\'' or '"'
		escaped bool
	)
	for i := 0; i < len(s); i++ {
		r := s[i] // the special characters are ASCII: bytes keep any other text as it is
		switch {
		case escaped:
			if quote == '"' && strings.IndexByte("\"\\$`", r) < 0 {
				cur.WriteByte('\\')
			}
			cur.WriteByte(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteByte(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteByte(r)
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
			cur.WriteByte(r)
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
