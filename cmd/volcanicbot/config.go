package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// Config is the bot's configuration: the config file named by
// VOLCANIC_CONFIG (optional) and the environment, which wins over the file
// key by key. An empty variable counts as unset. See configKeys for the
// mapping between the two.
type Config struct {
	// ConfigFile is the file that was read, "" when none.
	ConfigFile string

	Telegram TelegramConfig
	// DataDir is the root of all state (chats/<chat id>/ under it).
	DataDir string
	// AgentDir holds the user settings.json with mcpServers; ~ expanded.
	AgentDir string

	LLM        LLMConfig
	Log        LogConfig
	Playwright PlaywrightConfig

	// MCPServers is the config-file source (mcp.servers.<name> and the
	// MCP__SERVERS__<NAME>__<FIELD> variables), sorted with
	// mcpclient.SortServers. The preset and settings.json are merged later.
	MCPServers []mcpclient.ServerConfig
}

// TelegramConfig is the Bot API connection and the allowlist.
type TelegramConfig struct {
	Token string
	// AllowedUsers are Telegram user ids; empty means nobody.
	AllowedUsers []int64
	// APIURL is the Bot API base URL without a trailing slash.
	APIURL string
}

// LLMConfig selects the model and its endpoint.
type LLMConfig struct {
	Provider         string // "openai", "anthropic" or "" (lower-cased)
	Model            string
	OpenAIKey        string
	OpenAIBaseURL    string
	AnthropicKey     string
	AnthropicBaseURL string
}

// LogConfig is LOG_LEVEL and LOG_FORMAT, lower-cased; validated by Validate
// and NewLogger.
type LogConfig struct {
	Level  string
	Format string
}

// PlaywrightConfig carries the Playwright preset's settings; nil pointers
// and empty strings mean "not set" (the preset applies its defaults).
type PlaywrightConfig struct {
	Enabled  *bool
	Headless *bool
	Browser  string
	// ExtraArgs is a list in the config file; PLAYWRIGHT_EXTRA_ARGS (or a
	// string in the file) is split shell-style, honouring quotes.
	ExtraArgs []string
	Command   string
	Package   string
}

// Defaults.
const (
	defaultTelegramAPIURL = "https://api.telegram.org"
	defaultDataDir        = "./data"
	defaultAgentDir       = "~/.volcanic/agent"
	defaultLogLevel       = "info"
	defaultLogFormat      = logFormatText
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
//	data_dir                      VOLCANIC_DATA_DIR          ./data
//	agent_dir                     VOLCANIC_AGENT_DIR         ~/.volcanic/agent
//	llm.provider                  LLM_PROVIDER               openai | anthropic
//	llm.model                     LLM_MODEL
//	llm.openai.api_key            OPENAI_API_KEY
//	llm.openai.base_url           OPENAI_BASE_URL
//	llm.anthropic.api_key         ANTHROPIC_API_KEY
//	llm.anthropic.base_url        ANTHROPIC_BASE_URL
//	log.level                     LOG_LEVEL                  info
//	log.format                    LOG_FORMAT                 text
//	mcp.playwright.enabled        PLAYWRIGHT_ENABLED
//	mcp.playwright.headless       PLAYWRIGHT_HEADLESS
//	mcp.playwright.browser        PLAYWRIGHT_BROWSER
//	mcp.playwright.extra_args     PLAYWRIGHT_EXTRA_ARGS      a list, or a shell-style string
//	mcp.playwright.command        PLAYWRIGHT_COMMAND
//	mcp.playwright.package        PLAYWRIGHT_PACKAGE
//	mcp.servers.<name>.<field>    MCP__SERVERS__<NAME>__<FIELD>
//
// The config file itself is VOLCANIC_CONFIG. Server entries take the
// settings.json shape (command, args, env, cwd, toolPrefix, enabled, …);
// their field names match case-insensitively and ignoring underscores, so
// toolPrefix, toolprefix and tool_prefix are one field.
var configKeys = []configKey{
	{"telegram.bot_token", "TELEGRAM_BOT_TOKEN"},
	{"telegram.allowed_users", "TELEGRAM_ALLOWED_USERS"},
	{"telegram.api_url", "TELEGRAM_API_URL"},
	{"data_dir", "VOLCANIC_DATA_DIR"},
	{"agent_dir", "VOLCANIC_AGENT_DIR"},
	{"llm.provider", "LLM_PROVIDER"},
	{"llm.model", "LLM_MODEL"},
	{"llm.openai.api_key", "OPENAI_API_KEY"},
	{"llm.openai.base_url", "OPENAI_BASE_URL"},
	{"llm.anthropic.api_key", "ANTHROPIC_API_KEY"},
	{"llm.anthropic.base_url", "ANTHROPIC_BASE_URL"},
	{"log.level", "LOG_LEVEL"},
	{"log.format", "LOG_FORMAT"},
	{"mcp.playwright.enabled", "PLAYWRIGHT_ENABLED"},
	{"mcp.playwright.headless", "PLAYWRIGHT_HEADLESS"},
	{"mcp.playwright.browser", "PLAYWRIGHT_BROWSER"},
	{"mcp.playwright.extra_args", "PLAYWRIGHT_EXTRA_ARGS"},
	{"mcp.playwright.command", "PLAYWRIGHT_COMMAND"},
	{"mcp.playwright.package", "PLAYWRIGHT_PACKAGE"},
}

// configFileVar names the config file.
const configFileVar = "VOLCANIC_CONFIG"

// mcpServersEnvPrefix starts the per-server variables.
const mcpServersEnvPrefix = "MCP__SERVERS__"

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
			l.v.Set(k.key, val)
			l.fromEnv[k.key] = k.env
		}
	}

	c := &Config{ConfigFile: l.file}
	c.Telegram.Token = l.str("telegram.bot_token")
	c.Telegram.AllowedUsers = l.userIDs("telegram.allowed_users")
	c.Telegram.APIURL = l.apiURL("telegram.api_url")
	c.DataDir = l.dir("data_dir", defaultDataDir, lookup)
	c.AgentDir = l.dir("agent_dir", defaultAgentDir, lookup)
	c.LLM = LLMConfig{
		Provider:         strings.ToLower(l.str("llm.provider")),
		Model:            l.str("llm.model"),
		OpenAIKey:        l.str("llm.openai.api_key"),
		OpenAIBaseURL:    l.str("llm.openai.base_url"),
		AnthropicKey:     l.str("llm.anthropic.api_key"),
		AnthropicBaseURL: l.str("llm.anthropic.base_url"),
	}
	c.Log = LogConfig{
		Level:  strings.ToLower(cmp.Or(l.str("log.level"), defaultLogLevel)),
		Format: strings.ToLower(cmp.Or(l.str("log.format"), defaultLogFormat)),
	}
	c.Playwright = PlaywrightConfig{
		Enabled:   l.boolean("mcp.playwright.enabled"),
		Headless:  l.boolean("mcp.playwright.headless"),
		Browser:   l.str("mcp.playwright.browser"),
		ExtraArgs: l.args("mcp.playwright.extra_args"),
		Command:   l.str("mcp.playwright.command"),
		Package:   l.str("mcp.playwright.package"),
	}
	c.MCPServers = l.servers(raw, environ)

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
// typo does not pass silently. Server entries are checked by mcpclient.
func (l *configLoader) checkKeys() {
	known := map[string]bool{}
	for _, k := range configKeys {
		known[k.key] = true
	}
	var unknown []string
	for _, k := range l.v.AllKeys() {
		if !known[k] && k != "mcp.servers" && !strings.HasPrefix(k, "mcp.servers.") {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		l.errs = append(l.errs, fmt.Errorf("config %s: unknown key %q", l.file, k))
	}
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
	return filepath.Clean(p)
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

// servers builds the config-file source: mcp.servers.<name> read from the
// raw file, where names keep their case (viper would lower-case them, and
// its dotted paths would split a name such as "my.server"), with the
// MCP__SERVERS__<NAME>__<FIELD> variables applied over each entry field by
// field (and env variable by variable). Names compare ordinally; a
// variable's NAME is lower-cased, unless it matches the name of a file
// server ignoring case, which it then addresses.
func (l *configLoader) servers(raw map[string]any, environ []string) []mcpclient.ServerConfig {
	fields := entryFieldTypes()
	fileOrigin := "config " + l.file
	entries, refused := l.fileServers(raw, fields, fileOrigin)
	origins := map[string]string{}
	for name := range entries {
		origins[name] = fileOrigin
	}
	vars, names := l.envServers(environ, fields, entries)
	for _, name := range names {
		e, inFile := entries[name]
		switch {
		case refused[name]:
			continue
		case inFile:
			origins[name] = fileOrigin + " + environment"
		default:
			e = map[string]any{}
			entries[name] = e
			origins[name] = "environment"
		}
		for f, v := range vars[name] {
			if f == "env" {
				merged, _ := e["env"].(map[string]any)
				merged = maps.Clone(merged)
				if merged == nil {
					merged = map[string]any{}
				}
				maps.Copy(merged, v.(map[string]any))
				v = merged
			}
			e[f] = v
		}
	}

	var out []mcpclient.ServerConfig
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		data, err := json.Marshal(entries[name])
		if err != nil {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: origins[name], Server: name, Msg: "invalid entry: " + err.Error()})
			continue
		}
		c, err := mcpclient.ParseServerEntry(name, data, mcpclient.SourceConfig, origins[name])
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		out = append(out, c)
	}
	mcpclient.SortServers(out)
	return out
}

// fileServers returns the config file's server entries with canonical
// field names, and the names of the entries refused outright.
func (l *configLoader) fileServers(raw map[string]any, fields map[string]reflect.Type, origin string) (map[string]map[string]any, map[string]bool) {
	entries, refused := map[string]map[string]any{}, map[string]bool{}
	mcp, _ := lookupFold(raw, "mcp").(map[string]any)
	switch servers := lookupFold(mcp, "servers").(type) {
	case nil:
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			e, msg := fileEntry(servers[name], fields)
			if msg != "" {
				l.errs = append(l.errs, &mcpclient.ConfigError{Origin: origin, Server: name, Msg: msg})
				refused[name] = true
				continue
			}
			entries[name] = e
		}
	default:
		l.errs = append(l.errs, fmt.Errorf("%s: mcp.servers must be a mapping of server names to entries", origin))
	}
	return entries, refused
}

// envServers reads the MCP__SERVERS__<NAME>__<FIELD> variables into entries
// with canonical field names (JSON values), and the server names in the
// order first seen. <NAME>__ENV__<VARIABLE> sets one env variable and wins
// over the same variable in a JSON object given as <NAME>__ENV.
func (l *configLoader) envServers(environ []string, fields map[string]reflect.Type, file map[string]map[string]any) (map[string]map[string]any, []string) {
	vars := map[string]map[string]any{}
	var names []string
	for _, kv := range environ {
		k, val, _ := strings.Cut(kv, "=")
		n := len(mcpServersEnvPrefix)
		if val == "" || len(k) < n || !strings.EqualFold(k[:n], mcpServersEnvPrefix) {
			continue
		}
		parts := strings.Split(k[n:], "__")
		if len(parts) < 2 {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: "environment",
				Msg: fmt.Sprintf("%s: expected %s<NAME>__<FIELD>", k, mcpServersEnvPrefix)})
			continue
		}
		name := envServerName(strings.ToLower(parts[0]), file)
		field, ok := canonicalField(parts[1], fields)
		refuse := func(format string, args ...any) {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: "environment", Server: name,
				Field: cmp.Or(field, parts[1]), Msg: k + ": " + fmt.Sprintf(format, args...)})
		}
		switch {
		case !ok:
			refuse("unknown field %q", parts[1])
			continue
		case len(parts) > 2 && field != "env":
			refuse("unexpected %q after the field name", "__"+strings.Join(parts[2:], "__"))
			continue
		}
		var v any
		if field != "env" || len(parts) == 2 {
			var want string
			if v, want = envFieldValue(fields[field], val); want != "" {
				refuse("%s must be %s (got %q)", field, want, val)
				continue
			}
		}
		e := vars[name]
		if e == nil {
			e = map[string]any{}
			vars[name] = e
			names = append(names, name)
		}
		if field != "env" {
			e[field] = v
			continue
		}
		env, _ := e["env"].(map[string]any)
		if env == nil {
			env = map[string]any{}
			e["env"] = env
		}
		if len(parts) > 2 {
			env[strings.Join(parts[2:], "__")] = val
			continue
		}
		for variable, x := range v.(map[string]any) {
			if _, set := env[variable]; !set {
				env[variable] = x
			}
		}
	}
	return vars, names
}

// envServerName maps the lower-cased NAME of a variable to a server: a file
// server whose name equals it ignoring case, or the name itself.
func envServerName(name string, file map[string]map[string]any) string {
	if _, ok := file[name]; ok {
		return name
	}
	var match []string
	for n := range file {
		if strings.EqualFold(n, name) {
			match = append(match, n)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return name
}

// fileEntry canonicalises the field names of one config-file entry. An
// unknown field is kept as is for mcpclient to refuse. It returns a
// message when the entry cannot be used at all.
func fileEntry(v any, fields map[string]reflect.Type) (map[string]any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("entry must be a mapping of fields (got %s)", describeValue(v))
	}
	out := make(map[string]any, len(m))
	given := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, ok := canonicalField(k, fields)
		if !ok {
			f = k
		}
		if prev, dup := given[f]; dup {
			return nil, fmt.Sprintf("field %s is given twice (as %q and %q)", f, prev, k)
		}
		given[f] = k
		out[f] = m[k]
	}
	return out, ""
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// entryFieldTypes maps the JSON names of mcpclient.ServerEntry's fields to
// their types, so the variables follow the entry shape as it grows.
func entryFieldTypes() map[string]reflect.Type {
	t := reflect.TypeFor[mcpclient.ServerEntry]()
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = f.Type
		}
	}
	return m
}

// canonicalField finds the entry field named k, ignoring case and
// underscores: TOOLPREFIX, toolprefix and tool_prefix are toolPrefix.
func canonicalField(k string, fields map[string]reflect.Type) (string, bool) {
	norm := strings.ToLower(strings.ReplaceAll(k, "_", ""))
	for name := range fields {
		if strings.ToLower(name) == norm {
			return name, true
		}
	}
	return "", false
}

// envFieldValue converts a variable's text to the JSON value of a field of
// type t, or returns what was expected.
func envFieldValue(t reflect.Type, s string) (any, string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return s, ""
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, "true or false"
		}
		return b, ""
	case reflect.Float64, reflect.Float32, reflect.Int, reflect.Int64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, "a number"
		}
		return f, ""
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(s), "[") {
			var list []string
			if json.Unmarshal([]byte(s), &list) != nil {
				return nil, "a JSON array of strings or a comma-separated list"
			}
			return list, ""
		}
		var list []string
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return list, ""
	case reflect.Map:
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil, "a JSON object (or use " + mcpServersEnvPrefix + "<NAME>__ENV__<VARIABLE>)"
		}
		return m, ""
	}
	return nil, "of type " + t.String()
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
