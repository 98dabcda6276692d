package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// testEnv is a getenv over a map.
type testEnv map[string]string

func (e testEnv) get(k string) (string, bool) {
	v, ok := e[k]
	return v, ok
}

func writeConfigFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadOK(t *testing.T, e testEnv, environ ...string) *Config {
	t.Helper()
	c, err := LoadConfig(e.get, environ)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return c
}

func loadErr(t *testing.T, e testEnv, environ []string, want ...string) error {
	t.Helper()
	_, err := LoadConfig(e.get, environ)
	if err == nil {
		t.Fatal("LoadConfig: no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
	return err
}

func serverNames(s []mcpconfig.ServerConfig) []string {
	var out []string
	for _, c := range s {
		out = append(out, c.Name)
	}
	return out
}

func TestLoadConfigDefaults(t *testing.T) {
	c := loadOK(t, testEnv{"HOME": "/home/u"})
	want := &Config{
		Telegram: TelegramConfig{APIURL: "https://api.telegram.org"},
		DataDir:  mustAbs(t, "data"),
		AgentDir: "/home/u/.volcanic/agent",
		LLM:      LLMConfig{ContextTokens: 100_000, ToolSearch: session.ToolSearchAuto},
		Agent:    AgentConfig{MaxSteps: 40, ApprovalTimeout: 5 * time.Minute},
		Log:      LogConfig{Level: "info", Format: "text"},

		HandoffTimeout: 10 * time.Minute,

		MaxResultTokens:  25_000,
		ChatDiskBudgetMB: 256,
		Schedule:         ScheduleConfig{MaxJobsPerChat: 20, MinInterval: time.Minute, MaxTokensPerRun: 20_000},
		Speech:           SpeechConfig{STTMaxSeconds: 600},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if err := c.Validate(false); err != nil {
		t.Errorf("Validate(false): %v", err)
	}
}

func TestLoadConfigEnvironment(t *testing.T) {
	c := loadOK(t, testEnv{
		"HOME":                          "/home/u",
		"TELEGRAM_BOT_TOKEN":            "123:abc",
		"TELEGRAM_ALLOWED_USERS":        " 1, 22 ,333,,22",
		"TELEGRAM_API_URL":              "http://localhost:8081/",
		"VOLCANIC_DATA_DIR":             "/data",
		"VOLCANIC_AGENT_DIR":            "~/agent",
		"LLM_PROVIDER":                  "Anthropic",
		"LLM_MODEL":                     "claude",
		"OPENAI_API_KEY":                "sk-o",
		"OPENAI_BASE_URL":               "http://ollama:11434/v1",
		"ANTHROPIC_API_KEY":             "sk-a",
		"ANTHROPIC_BASE_URL":            "https://api.anthropic.com",
		"LOG_LEVEL":                     "DEBUG",
		"LOG_FORMAT":                    "JSON",
		"PLAYWRIGHT_ENABLED":            "true",
		"PLAYWRIGHT_HEADLESS":           "0",
		"PLAYWRIGHT_BROWSER":            "firefox",
		"PLAYWRIGHT_EXTRA_ARGS":         `--no-sandbox --device "iPhone 15"`,
		"PLAYWRIGHT_COMMAND":            "playwright-mcp",
		"PLAYWRIGHT_PACKAGE":            "@playwright/mcp@0.0.83",
		"ANTHROPIC_AUTH_HEADER":         "Bearer",
		"ANTHROPIC_VERSION":             "2023-06-01",
		"LLM_MAX_TOKENS":                "4096",
		"LLM_CONTEXT_TOKENS":            "32000",
		"LLM_TOOL_SEARCH":               "ON",
		"SYSTEM_PROMPT":                 "be brief",
		"AGENT_MAX_STEPS":               "12",
		"STREAM_REPLIES":                "false",
		"HTTP_ADDR":                     ":8080",
		"TELEGRAM_WEBHOOK_URL":          "https://bot.example.test/telegram",
		"TELEGRAM_WEBHOOK_SECRET":       "hook-secret_123",
		"MCP_MAX_RESULT_TOKENS":         "12000",
		"CHAT_DISK_BUDGET_MB":           "1024",
		"SCHEDULE_MAX_JOBS_PER_CHAT":    "5",
		"SCHEDULE_MIN_INTERVAL_SECONDS": "1",
		"SCHEDULE_MAX_TOKENS_PER_RUN":   "9000",
		"TZ":                            "Europe/Berlin",
		"TELEGRAM_LOCAL_FILES_DIR":      "/var/lib/telegram-bot-api/",
		"TELEGRAM_MAX_FILE_MB":          "500",
	})
	want := &Config{
		Telegram: TelegramConfig{Token: "123:abc", AllowedUsers: []int64{1, 22, 333}, APIURL: "http://localhost:8081",
			WebhookURL: "https://bot.example.test/telegram", WebhookSecret: "hook-secret_123",
			LocalFilesDir: "/var/lib/telegram-bot-api", MaxFileMB: 500},
		DataDir:  "/data",
		AgentDir: "/home/u/agent",
		LLM: LLMConfig{Provider: "anthropic", Model: "claude", Models: []string{"claude"}, OpenAIKey: "sk-o", OpenAIBaseURL: "http://ollama:11434/v1",
			AnthropicKey: "sk-a", AnthropicBaseURL: "https://api.anthropic.com", AnthropicAuthHeader: "bearer",
			AnthropicVersion: "2023-06-01", MaxTokens: 4096, ContextTokens: 32000, ToolSearch: session.ToolSearchOn},
		Agent:    AgentConfig{SystemPrompt: "be brief", MaxSteps: 12, ApprovalTimeout: 5 * time.Minute, NoStream: true},
		HTTPAddr: ":8080",
		Log:      LogConfig{Level: "debug", Format: "json"},

		HandoffTimeout: 10 * time.Minute,
		Playwright: preset.Playwright{Enabled: new(true), Headless: new(false), Browser: "firefox",
			ExtraArgs: []string{"--no-sandbox", "--device", "iPhone 15"}, Command: "playwright-mcp", Package: "@playwright/mcp@0.0.83"},
		MaxResultTokens:  12_000,
		ChatDiskBudgetMB: 1024,
		Schedule:         ScheduleConfig{MaxJobsPerChat: 5, MinInterval: time.Second, MaxTokensPerRun: 9000, Zone: "Europe/Berlin"},
		Speech:           SpeechConfig{STTMaxSeconds: 600},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if err := c.Validate(true); err != nil {
		t.Errorf("Validate(true): %v", err)
	}
}

func TestLoadConfigFileFormats(t *testing.T) {
	files := map[string]string{
		"c.yaml": `
telegram:
  bot_token: "file-token"
  allowed_users: [5, 6]
llm:
  provider: openai
  openai:
    api_key: file-key
log:
  level: warn
mcp:
  playwright:
    enabled: true
    extra_args: ["--isolated", "--a b"]
  servers:
    GitHub:
      command: npx
      args: ["-y", "@modelcontextprotocol/server-github@2025.9.1"]
      env: {GITHUB_TOKEN: "${env:GITHUB_TOKEN}", DROP: null}
      toolPrefix: gh_
      callTimeoutSeconds: 30
      stderrLevel: Warning
    fetch:
      command: uvx
      tool_prefix: f_
      idletimeoutseconds: 0
`,
		"c.json": `{
  "telegram": {"bot_token": "file-token", "allowed_users": [5, 6]},
  "llm": {"provider": "openai", "openai": {"api_key": "file-key"}},
  "log": {"level": "warn"},
  "mcp": {
    "playwright": {"enabled": true, "extra_args": ["--isolated", "--a b"]},
    "servers": {
      "GitHub": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@2025.9.1"],
                 "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "DROP": null},
                 "toolPrefix": "gh_", "callTimeoutSeconds": 30, "stderrLevel": "Warning"},
      "fetch": {"command": "uvx", "tool_prefix": "f_", "idletimeoutseconds": 0}
    }
  }
}`,
		"c.toml": `
[telegram]
bot_token = "file-token"
allowed_users = [5, 6]
[llm]
provider = "openai"
[llm.openai]
api_key = "file-key"
[log]
level = "warn"
[mcp.playwright]
enabled = true
extra_args = ["--isolated", "--a b"]
[mcp.servers.GitHub]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github@2025.9.1"]
toolPrefix = "gh_"
callTimeoutSeconds = 30
stderrLevel = "Warning"
[mcp.servers.GitHub.env]
GITHUB_TOKEN = "${env:GITHUB_TOKEN}"
[mcp.servers.fetch]
command = "uvx"
tool_prefix = "f_"
idletimeoutseconds = 0
`,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			p := writeConfigFile(t, name, content)
			c := loadOK(t, testEnv{"VOLCANIC_CONFIG": p, "HOME": "/h"})
			if c.ConfigFile != p || c.Telegram.Token != "file-token" || !slices.Equal(c.Telegram.AllowedUsers, []int64{5, 6}) ||
				c.LLM.Provider != "openai" || c.LLM.OpenAIKey != "file-key" || c.Log.Level != "warn" ||
				c.Playwright.Enabled == nil || !*c.Playwright.Enabled || !slices.Equal(c.Playwright.ExtraArgs, []string{"--isolated", "--a b"}) {
				t.Errorf("scalars: %+v", c)
			}
			if got := serverNames(c.MCPServers); !slices.Equal(got, []string{"fetch", "GitHub"}) {
				t.Fatalf("servers %v, want [fetch GitHub] (case kept, sorted)", got)
			}
			f, gh := c.MCPServers[0], c.MCPServers[1]
			if gh.Source != mcpconfig.SourceConfig || gh.Origin != "config "+p || gh.Command != "npx" || gh.ToolPrefix != "gh_" ||
				gh.CallTimeout != 30*time.Second || gh.StderrLevel != slog.LevelWarn || len(gh.Args) != 2 ||
				gh.Env["GITHUB_TOKEN"] == nil || *gh.Env["GITHUB_TOKEN"] != "${env:GITHUB_TOKEN}" {
				t.Errorf("GitHub: %+v", gh)
			}
			if v, ok := gh.Env["DROP"]; name != "c.toml" && (!ok || v != nil) { // TOML has no null
				t.Errorf("DROP = %v, %v; want a removal", v, ok)
			}
			if f.ToolPrefix != "f_" || f.IdleTimeout != 0 {
				t.Errorf("fetch: %+v", f)
			}
		})
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	p := writeConfigFile(t, "c.yaml", `
telegram: {bot_token: file-token, api_url: "http://file"}
log: {level: error, format: json}
data_dir: /file/data
mcp:
  playwright: {headless: false}
  servers:
    GitHub: {command: npx, args: [a], env: {A: file, B: file}, toolPrefix: gh_}
`)
	c := loadOK(t, testEnv{
		"VOLCANIC_CONFIG":     p,
		"HOME":                "/h",
		"TELEGRAM_BOT_TOKEN":  "env-token", // env beats file
		"TELEGRAM_API_URL":    "",          // empty = unset: the file's value stays
		"LOG_LEVEL":           "",
		"LOG_FORMAT":          "text",
		"VOLCANIC_DATA_DIR":   "",
		"PLAYWRIGHT_HEADLESS": "true", // the file wins for the preset's keys
		"PLAYWRIGHT_ENABLED":  "",     // unset in both: nil
		"PLAYWRIGHT_BROWSER":  "firefox",
	},
		"MCP__SERVERS__GITHUB__ARGS=b,c",
		"MCP__SERVERS__GITHUB__ENV__B=env",
		"MCP__SERVERS__GITHUB__ENV__C=env",
		"MCP__SERVERS__GITHUB__TOOLPREFIX=",
		"MCP__SERVERS__GITHUB__CALLTIMEOUTSECONDS=5",
	)
	if c.Telegram.Token != "env-token" || c.Telegram.APIURL != "http://file" || c.Log.Level != "error" ||
		c.Log.Format != "text" || c.DataDir != "/file/data" || c.Playwright.Headless == nil || *c.Playwright.Headless ||
		c.Playwright.Enabled != nil || c.Playwright.Browser != "firefox" {
		t.Errorf("scalars: %+v", c)
	}
	if len(c.MCPServers) != 1 {
		t.Fatalf("servers %v", serverNames(c.MCPServers))
	}
	gh := c.MCPServers[0]
	if gh.Name != "GitHub" || !slices.Equal(gh.Args, []string{"b", "c"}) || gh.ToolPrefix != "gh_" ||
		gh.CallTimeout != 5*time.Second || gh.Origin != "config "+p+" + environment" {
		t.Errorf("GitHub: %+v", gh)
	}
	gotEnv := map[string]string{}
	for k, v := range gh.Env {
		gotEnv[k] = *v
	}
	if want := map[string]string{"A": "file", "B": "env", "C": "env"}; !reflect.DeepEqual(gotEnv, want) {
		t.Errorf("env %v, want %v", gotEnv, want)
	}
}

func TestLoadConfigServersFromEnvironment(t *testing.T) {
	c := loadOK(t, testEnv{"HOME": "/h"},
		"PATH=/bin",
		"MCP__SERVERS__GITHUB__COMMAND=npx",
		`MCP__SERVERS__GITHUB__ARGS=["-y", "x,y"]`,
		"MCP__SERVERS__GITHUB__ENV__GITHUB_TOKEN=${env:GITHUB_TOKEN}",
		`MCP__SERVERS__GITHUB__ENV={"GITHUB_TOKEN": "json", "NODE_OPTIONS": null}`,
		"MCP__SERVERS__GITHUB__TOOLPREFIX=gh_",
		"MCP__SERVERS__GITHUB__ENABLED=false",
		"MCP__SERVERS__GITHUB__PARALLEL=1",
		"MCP__SERVERS__GITHUB__IDLE_TIMEOUT_SECONDS=0",
		"MCP__SERVERS__GITHUB__PROTOCOLVERSION=2025-06-18",
		"MCP__SERVERS__B__COMMAND=b",
		"MCP__SERVERS__A__COMMAND=a",
		"MCP__SERVERS__UNUSED__COMMAND=", // empty = unset: no server
	)
	if got := serverNames(c.MCPServers); !slices.Equal(got, []string{"a", "b", "github"}) {
		t.Fatalf("servers %v", got)
	}
	gh := c.MCPServers[2]
	if gh.Command != "npx" || !slices.Equal(gh.Args, []string{"-y", "x,y"}) || gh.ToolPrefix != "gh_" || gh.Enabled ||
		!gh.Parallel || gh.IdleTimeout != 0 || gh.ProtocolVersion != "2025-06-18" || gh.Origin != "environment" {
		t.Errorf("github: %+v", gh)
	}
	if v := gh.Env["GITHUB_TOKEN"]; v == nil || *v != "${env:GITHUB_TOKEN}" {
		t.Errorf("GITHUB_TOKEN = %v; __ENV__<NAME> must win over the __ENV object", v)
	}
	if v, ok := gh.Env["NODE_OPTIONS"]; !ok || v != nil {
		t.Errorf("NODE_OPTIONS = %v, %v; want a removal", v, ok)
	}
}

// A server at a URL from variables: HEADERS key by key, or as a JSON object.
func TestLoadConfigHTTPServerFromEnvironment(t *testing.T) {
	c := loadOK(t, testEnv{"HOME": "/h"},
		"MCP__SERVERS__REMOTE__URL=https://mcp.example.test/mcp",
		"MCP__SERVERS__REMOTE__HEADERS__AUTHORIZATION=Bearer ${env:REMOTE_TOKEN}",
		`MCP__SERVERS__REMOTE__HEADERS={"X-Team": "blue", "AUTHORIZATION": "json"}`,
	)
	if len(c.MCPServers) != 1 {
		t.Fatalf("servers %+v", c.MCPServers)
	}
	r := c.MCPServers[0]
	if r.URL != "https://mcp.example.test/mcp" || r.Command != "" || r.Headers["AUTHORIZATION"] != "Bearer ${env:REMOTE_TOKEN}" ||
		r.Headers["X-Team"] != "blue" {
		t.Errorf("remote: %+v", r)
	}
}

func TestLoadConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	yaml := func(content string) string { return writeConfigFile(t, "c.yaml", content) }
	tests := []struct {
		name    string
		env     testEnv
		environ []string
		want    []string
	}{
		{"missing config file", testEnv{"VOLCANIC_CONFIG": filepath.Join(dir, "nope.yaml")},
			nil, []string{"config file: open " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"}},
		{"unsupported extension", testEnv{"VOLCANIC_CONFIG": "/etc/volcanic.ini"}, nil,
			[]string{`config file /etc/volcanic.ini: unsupported extension ".ini"`}},
		{"yaml syntax", testEnv{"VOLCANIC_CONFIG": yaml("telegram: [\n")}, nil, []string{"config file ", "yaml"}},
		{"json syntax", testEnv{"VOLCANIC_CONFIG": writeConfigFile(t, "c.json", "{\n  \"log\": {\"level\": \"x\",}\n}")}, nil,
			[]string{"invalid JSON at line 2, column 24"}},
		{"invalid user ids", testEnv{"TELEGRAM_ALLOWED_USERS": "1,abc,-5,0,2"}, nil,
			[]string{`TELEGRAM_ALLOWED_USERS: invalid user id "abc"`, `TELEGRAM_ALLOWED_USERS: invalid user id "-5"`, `invalid user id "0"`}},
		{"invalid user id in file", testEnv{"VOLCANIC_CONFIG": yaml("telegram:\n  allowed_users: [1, x]\n")}, nil,
			[]string{`: telegram.allowed_users: invalid user id "x"`}},
		{"api url", testEnv{"TELEGRAM_API_URL": "api.telegram.org"}, nil,
			[]string{`TELEGRAM_API_URL: must be an http or https URL (got "api.telegram.org")`}},
		{"tool search", testEnv{"HOME": "/h", "LLM_TOOL_SEARCH": "sometimes"}, nil,
			[]string{`LLM_TOOL_SEARCH: must be auto, on or off (got "sometimes")`}},
		{"tool search in file", testEnv{"HOME": "/h", "VOLCANIC_CONFIG": yaml("llm:\n  tool_search: maybe\n")}, nil,
			[]string{`llm.tool_search: must be auto, on or off (got "maybe")`}},
		{"result cap", testEnv{"HOME": "/h", "MCP_MAX_RESULT_TOKENS": "0"}, nil,
			[]string{`MCP_MAX_RESULT_TOKENS: must be positive (got 0)`}},
		{"no browsers", testEnv{"HOME": "/h", "PLAYWRIGHT_MAX_BROWSERS": "0"}, nil,
			[]string{`PLAYWRIGHT_MAX_BROWSERS: must be positive (got 0)`}},
		{"no disk budget", testEnv{"HOME": "/h", "CHAT_DISK_BUDGET_MB": "0"}, nil,
			[]string{`CHAT_DISK_BUDGET_MB: must be positive (got 0)`}},
		{"a disk budget in gigabytes", testEnv{"HOME": "/h", "CHAT_DISK_BUDGET_MB": "1G"}, nil,
			[]string{`CHAT_DISK_BUDGET_MB: must be a whole number (got "1G")`}},
		{"negative browsers", testEnv{"HOME": "/h", "PLAYWRIGHT_MAX_BROWSERS": "-2"}, nil,
			[]string{`PLAYWRIGHT_MAX_BROWSERS: must be positive (got -2)`}},
		{"shared bool", testEnv{"HOME": "/h", "PLAYWRIGHT_SHARED": "perhaps"}, nil,
			[]string{`PLAYWRIGHT_SHARED: must be true or false (got "perhaps")`}},
		{"stream bool", testEnv{"HOME": "/h", "STREAM_REPLIES": "sometimes"}, nil,
			[]string{`STREAM_REPLIES: must be true or false (got "sometimes")`}},
		{"playwright bool", testEnv{"PLAYWRIGHT_ENABLED": "yes please"}, nil,
			[]string{`PLAYWRIGHT_ENABLED: must be true or false (got "yes please")`}},
		{"extra args quote", testEnv{"PLAYWRIGHT_EXTRA_ARGS": `--device "iPhone`}, nil,
			[]string{`PLAYWRIGHT_EXTRA_ARGS: unterminated " quote`}},
		{"no HOME", testEnv{}, nil, []string{`agent_dir: cannot expand ~ in "~/.volcanic/agent": HOME is not set`}},
		{"unknown key", testEnv{"VOLCANIC_CONFIG": yaml("telegram:\n  bot_tokn: x\nlog:\n  level: info\n")}, nil,
			[]string{`unknown key "telegram.bot_tokn"`}},
		{"unknown server field in file", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers:\n    gh:\n      command: x\n      toolPrefx: a\n")}, nil,
			[]string{`.yaml: server "gh": unknown field "toolPrefx" (did you mean "toolPrefix"?)`}},
		{"server field type in file", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers:\n    gh:\n      command: x\n      args: -y\n")}, nil,
			[]string{`server "gh": args must be an array of strings (got string)`}},
		{"server validation in file", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers:\n    gh:\n      command: x\n      callTimeoutSeconds: 0\n")}, nil,
			[]string{`.yaml: server "gh": callTimeoutSeconds must be positive (got 0)`}},
		{"server entry not a mapping", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers:\n    gh: npx\n")}, nil,
			[]string{`server "gh": entry must be a mapping of fields (got a string)`}},
		{"servers not a mapping", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers: [a]\n")}, nil,
			[]string{`mcp.servers must be a mapping of server names to entries`}},
		{"field given twice", testEnv{"VOLCANIC_CONFIG": yaml("mcp:\n  servers:\n    gh:\n      command: x\n      toolPrefix: a\n      tool_prefix: b\n")}, nil,
			[]string{`server "gh": field toolPrefix is given twice`}},
		{"env server: bad bool", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMMAND=x", "MCP__SERVERS__GH__ENABLED=yep"},
			[]string{`environment: server "gh": MCP__SERVERS__GH__ENABLED: enabled must be true or false (got "yep")`}},
		{"env server: bad number", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMMAND=x", "MCP__SERVERS__GH__CALLTIMEOUTSECONDS=1m"},
			[]string{`MCP__SERVERS__GH__CALLTIMEOUTSECONDS: callTimeoutSeconds must be a number (got "1m")`}},
		{"env server: zero timeout", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMMAND=x", "MCP__SERVERS__GH__STARTUPTIMEOUTSECONDS=0"},
			[]string{`environment: server "gh": startupTimeoutSeconds must be positive (got 0)`}},
		{"env server: unknown field", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMAND=x"},
			[]string{`environment: server "gh": MCP__SERVERS__GH__COMAND: unknown field "COMAND"`}},
		{"env server: no field", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH=x"},
			[]string{`MCP__SERVERS__GH: expected MCP__SERVERS__<NAME>__<FIELD>`}},
		{"env server: no command", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__TOOLPREFIX=x"},
			[]string{`environment: server "gh": command must not be empty`}},
		{"env server: bad args", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMMAND=x", `MCP__SERVERS__GH__ARGS=["a",1]`},
			[]string{`args must be a JSON array of strings or a comma-separated list`}},
		{"env server: suffix", testEnv{"HOME": "/h"}, []string{"MCP__SERVERS__GH__COMMAND__X=x"},
			[]string{`MCP__SERVERS__GH__COMMAND__X: unexpected "__X" after the field name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loadErr(t, tt.env, tt.environ, tt.want...)
		})
	}
}

// The schedule's settings refuse a zone no host knows and numbers that
// are not positive.
func TestLoadScheduleConfigRefusals(t *testing.T) {
	for env, want := range map[string]string{
		"TZ":                            `TZ: unknown time zone "Mars/Olympus"`,
		"SCHEDULE_MAX_JOBS_PER_CHAT":    `SCHEDULE_MAX_JOBS_PER_CHAT: must be a whole number`,
		"SCHEDULE_MIN_INTERVAL_SECONDS": `SCHEDULE_MIN_INTERVAL_SECONDS: must be a whole number`,
	} {
		value := "x"
		if env == "TZ" {
			value = "Mars/Olympus"
		}
		loadErr(t, testEnv{"HOME": "/h", env: value}, nil, want)
	}
}

func TestLoadConfigCollectsAllErrors(t *testing.T) {
	err := loadErr(t, testEnv{"HOME": "/h", "TELEGRAM_ALLOWED_USERS": "x", "PLAYWRIGHT_HEADLESS": "maybe"},
		[]string{"MCP__SERVERS__A__COMMAND=", "MCP__SERVERS__A__CALLTIMEOUTSECONDS=-1", "MCP__SERVERS__B__STDERRLEVEL=loud"},
		"TELEGRAM_ALLOWED_USERS", "PLAYWRIGHT_HEADLESS", `server "a": command must not be empty`,
		`server "a": callTimeoutSeconds must be positive (got -1)`, `server "b": command must not be empty`, `server "b": stderrLevel`)
	var ce *mcpconfig.ConfigError
	if !errors.As(err, &ce) || ce.Origin != "environment" {
		t.Errorf("no *mcpconfig.ConfigError from the environment in %v", err)
	}
}

func TestEnvironmentAddressesFileServerIgnoringCase(t *testing.T) {
	p := writeConfigFile(t, "c.yaml", "mcp:\n  servers:\n    GitHub: {command: npx}\n    Both: {command: x}\n    both: {command: y}\n")
	c := loadOK(t, testEnv{"VOLCANIC_CONFIG": p, "HOME": "/h"},
		"MCP__SERVERS__GITHUB__TOOLPREFIX=gh_", // addresses GitHub
		"MCP__SERVERS__BOTH__TOOLPREFIX=b_",    // exact lower-case match wins
	)
	byName := map[string]mcpconfig.ServerConfig{}
	for _, s := range c.MCPServers {
		byName[s.Name] = s
	}
	if got := serverNames(c.MCPServers); !slices.Equal(got, []string{"Both", "both", "GitHub"}) {
		t.Fatalf("servers %v", got)
	}
	if byName["GitHub"].ToolPrefix != "gh_" || byName["both"].ToolPrefix != "b_" || byName["Both"].ToolPrefix != "" {
		t.Errorf("prefixes: GitHub %q both %q Both %q", byName["GitHub"].ToolPrefix, byName["both"].ToolPrefix, byName["Both"].ToolPrefix)
	}
}

// The three sources: the config file (and its variables) first, then the
// preset, then settings.json; the first wins a name and the loser is logged.
func TestServerSourcesPrecedence(t *testing.T) {
	p := writeConfigFile(t, "c.yaml", "mcp:\n  servers:\n    github: {command: from-config}\n")
	c := loadOK(t, testEnv{"VOLCANIC_CONFIG": p, "HOME": "/h"}, "MCP__SERVERS__FETCH__COMMAND=from-env")
	settings, err := mcpconfig.ParseSettings([]byte(`{"mcpServers": {
		"zz": {"command": "from-settings"},
		"github": {"command": "from-settings"},
		"fetch": {"command": "from-settings"},
		"playwright": {"command": "from-settings"}}}`), "settings s.json")
	if err != nil {
		t.Fatal(err)
	}
	preset := []mcpconfig.ServerConfig{{Name: "playwright", Command: "from-preset", Origin: "preset playwright", Source: mcpconfig.SourcePreset, Enabled: true}}

	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	got := mcpconfig.Merge(logger, c.MCPServers, preset, settings)
	var pairs []string
	for _, s := range got {
		pairs = append(pairs, s.Name+"="+s.Command)
	}
	want := []string{"fetch=from-env", "github=from-config", "playwright=from-preset", "zz=from-settings"}
	if !slices.Equal(pairs, want) {
		t.Errorf("merged %v, want %v", pairs, want)
	}
	for _, w := range []string{
		`server=github used="config ` + p + `" ignored="settings s.json"`,
		`server=fetch used=environment ignored="settings s.json"`,
		`server=playwright used="preset playwright" ignored="settings s.json"`,
	} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, buf.String())
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		requireBot bool
		want       string
	}{
		{"check needs no token", Config{Log: LogConfig{"info", "text"}}, false, ""},
		{"run needs a token", Config{Log: LogConfig{"info", "text"}}, true, "TELEGRAM_BOT_TOKEN (telegram.bot_token) is required to run the bot"},
		{"run with token", Config{Telegram: TelegramConfig{Token: "t"}}, true, ""},
		{"provider", Config{LLM: LLMConfig{Provider: "gemini"}}, false, `LLM_PROVIDER (llm.provider) must be openai or anthropic (got "gemini")`},
		{"openai", Config{LLM: LLMConfig{Provider: "openai"}}, false, ""},
		{"local files", Config{Telegram: TelegramConfig{LocalFilesDir: "/srv/tba", MaxFileMB: 2000}}, false, ""},
		{"a file limit without local files", Config{Telegram: TelegramConfig{MaxFileMB: 100}}, false, "it needs TELEGRAM_LOCAL_FILES_DIR"},
		{"a file limit over the server's", Config{Telegram: TelegramConfig{LocalFilesDir: "/srv/tba", MaxFileMB: 4000}}, false,
			"TELEGRAM_MAX_FILE_MB (telegram.max_file_mb) must be at most 2000"},
		{"anthropic", Config{LLM: LLMConfig{Provider: "anthropic"}}, false, ""},
		{"log level", Config{Log: LogConfig{Level: "trace"}}, false, `LOG_LEVEL must be debug, info, warn or error (got "trace")`},
		{"log format", Config{Log: LogConfig{Format: "xml"}}, false, `LOG_FORMAT must be text or json (got "xml")`},
		{"webhook", webhookConfig("https://bot.example.test/telegram", "", ":8080"), true, ""},
		{"webhook with secret", webhookConfig("https://bot.example.test/t", "abc_DEF-123", ":8080"), true, ""},
		{"webhook on this machine over http", webhookConfig("http://127.0.0.1:8080/t", "", ":8080"), true, ""},
		{"webhook over http", webhookConfig("http://bot.example.test/t", "", ":8080"), true, "must be https: Telegram posts only to https"},
		{"webhook not a URL", webhookConfig("bot.example.test", "", ":8080"), true, "must be an https URL"},
		{"webhook with a query", webhookConfig("https://bot.example.test/t?x=1", "", ":8080"), true, "must have a plain path"},
		{"webhook path pattern", webhookConfig("https://bot.example.test/{id}", "", ":8080"), true, "must have a plain path"},
		{"webhook on /healthz", webhookConfig("https://bot.example.test/healthz", "", ":8080"), true, "cannot use the path /healthz"},
		{"webhook under /live/", webhookConfig("https://bot.example.test/live/hook", "", ":8080"), true, "cannot use a path under /live/"},
		{"webhook without listener", webhookConfig("https://bot.example.test/t", "", ""), true, "needs HTTP_ADDR"},
		{"webhook secret", webhookConfig("https://bot.example.test/t", "no spaces allowed", ":8080"), true, "TELEGRAM_WEBHOOK_SECRET (telegram.webhook_secret) must be"},
		{"secret without webhook", webhookConfig("", "abc", ":8080"), true, "TELEGRAM_WEBHOOK_SECRET (telegram.webhook_secret) is set but TELEGRAM_WEBHOOK_URL is not"},
		{"cdp endpoint", browserConfig("ws://chromium:9222", ""), false, ""},
		{"cdp endpoint with token and header", browserConfig("wss://chrome.browserless.io?token=abc", "Authorization: Bearer x"), false, ""},
		{"cdp endpoint not a URL", browserConfig("chromium:9222", ""), false, "PLAYWRIGHT_CDP_ENDPOINT (mcp.playwright.cdp_endpoint) must be an http://, https://, ws:// or wss:// URL"},
		{"cdp endpoint ftp", browserConfig("ftp://chromium:9222", ""), false, "must be an http://, https://, ws:// or wss:// URL"},
		{"cdp endpoint without sharing", Config{Playwright: preset.Playwright{CDPEndpoint: "http://c:9222", Shared: ptr(false)}}, false,
			"it needs PLAYWRIGHT_SHARED (mcp.playwright.shared) true or unset"},
		{"cdp header shape", browserConfig("http://c:9222", "Bearer x"), false, `PLAYWRIGHT_CDP_HEADER (mcp.playwright.cdp_header) must be "Name: value"`},
		{"cdp header alone", browserConfig("", "Authorization: Bearer x"), false, "is sent to PLAYWRIGHT_CDP_ENDPOINT, which is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate(tt.requireBot)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	// Every problem at once.
	err := (&Config{LLM: LLMConfig{Provider: "x"}, Log: LogConfig{Level: "x", Format: "x"}}).Validate(true)
	if err == nil || strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("want four errors, got %v", err)
	}
}

func browserConfig(endpoint, header string) Config {
	return Config{Playwright: preset.Playwright{CDPEndpoint: endpoint, CDPHeader: header}}
}

func webhookConfig(url, secret, addr string) Config {
	return Config{Telegram: TelegramConfig{Token: "t", WebhookURL: url, WebhookSecret: secret}, HTTPAddr: addr}
}

func TestAllowedUsers(t *testing.T) {
	tests := []struct {
		in   string
		want []int64
	}{
		{"", nil},
		{"42", []int64{42}},
		{"1,2,3", []int64{1, 2, 3}},
		{" 1 , 2 ", []int64{1, 2}},
		{"1,,2,", []int64{1, 2}},
		{"7,7", []int64{7}},
		{"9223372036854775807", []int64{9223372036854775807}},
	}
	for _, tt := range tests {
		c := loadOK(t, testEnv{"HOME": "/h", "TELEGRAM_ALLOWED_USERS": tt.in})
		if !slices.Equal(c.Telegram.AllowedUsers, tt.want) {
			t.Errorf("%q: got %v, want %v", tt.in, c.Telegram.AllowedUsers, tt.want)
		}
	}
	for _, bad := range []string{"abc", "1.5", "-1", "0", "9223372036854775808", "@user"} {
		loadErr(t, testEnv{"HOME": "/h", "TELEGRAM_ALLOWED_USERS": "1," + bad}, nil, `TELEGRAM_ALLOWED_USERS: invalid user id "`+bad+`"`)
	}
}

func TestDirectories(t *testing.T) {
	tests := []struct {
		env       testEnv
		data, agt string
	}{
		{testEnv{"HOME": "/home/u"}, mustAbs(t, "data"), "/home/u/.volcanic/agent"}, // relative → absolute
		{testEnv{"HOME": "/home/u", "VOLCANIC_AGENT_DIR": "~"}, mustAbs(t, "data"), "/home/u"},
		{testEnv{"HOME": "/home/u", "VOLCANIC_AGENT_DIR": "/etc/agent/", "VOLCANIC_DATA_DIR": "~/d"}, "/home/u/d", "/etc/agent"},
		{testEnv{"VOLCANIC_AGENT_DIR": "rel/~x", "VOLCANIC_DATA_DIR": "/data"}, "/data", mustAbs(t, "rel/~x")}, // no HOME needed
	}
	for _, tt := range tests {
		c := loadOK(t, tt.env)
		if c.DataDir != tt.data || c.AgentDir != tt.agt {
			t.Errorf("%v: data %q agent %q; want %q %q", tt.env, c.DataDir, c.AgentDir, tt.data, tt.agt)
		}
	}
}

func TestSplitShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"--no-sandbox", []string{"--no-sandbox"}},
		{`--device "iPhone 15"`, []string{"--device", "iPhone 15"}},
		{`--a 'b c' d`, []string{"--a", "b c", "d"}},
		{`x"y z"w`, []string{"xy zw"}},
		{`"" ''`, []string{"", ""}},
		{`a\ b`, []string{"a b"}},
		{`"a \"q\" \n"`, []string{`a "q" \n`}},
		{`'it''s'`, []string{"its"}},
		{"a\tb\nc", []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		got, err := splitShellWords(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitShellWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`"a`, `'a`, `a\`} {
		if _, err := splitShellWords(bad); err == nil {
			t.Errorf("splitShellWords(%q): no error", bad)
		}
	}
}

// The mapping table documents every key; keys and variables are unique.
func TestConfigKeysUnique(t *testing.T) {
	keys, vars := map[string]bool{}, map[string]bool{}
	for _, k := range configKeys {
		if keys[k.key] || vars[k.env] {
			t.Errorf("duplicate %v", k)
		}
		keys[k.key], vars[k.env] = true, true
		if k.key != strings.ToLower(k.key) {
			t.Errorf("%q: viper keys are lower-case", k.key)
		}
	}
}

func TestSystemPromptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompt.md")
	if err := os.WriteFile(path, []byte("You are a pirate."), 0o600); err != nil {
		t.Fatal(err)
	}
	c := loadOK(t, testEnv{"HOME": "/home/u", "SYSTEM_PROMPT_FILE": path})
	if c.Agent.SystemPrompt != "You are a pirate." {
		t.Errorf("prompt = %q", c.Agent.SystemPrompt)
	}
	_, err := LoadConfig(testEnv{"HOME": "/home/u", "SYSTEM_PROMPT_FILE": path + ".missing"}.get, nil)
	if err == nil || !strings.Contains(err.Error(), "SYSTEM_PROMPT_FILE") {
		t.Errorf("missing prompt file: %v", err)
	}
	_, err = LoadConfig(testEnv{"HOME": "/home/u", "AGENT_MAX_STEPS": "zero"}.get, nil)
	if err == nil || !strings.Contains(err.Error(), "AGENT_MAX_STEPS") {
		t.Errorf("bad max steps: %v", err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// A section with nothing under it is an empty section, not an unknown key;
// a section given a value is refused with what it should be.
func TestLoadConfigEmptySections(t *testing.T) {
	for _, content := range []string{"telegram:\n", "telegram:\nllm:\n  openai:\nmcp:\n", "telegram: {}\nmcp:\n  servers:\n"} {
		loadOK(t, testEnv{"VOLCANIC_CONFIG": writeConfigFile(t, "c.yaml", content), "HOME": "/h"})
	}
	loadErr(t, testEnv{"VOLCANIC_CONFIG": writeConfigFile(t, "c.yaml", "telegram: 5\n"), "HOME": "/h"}, nil,
		`telegram must be a section of keys (got 5)`)
}

// Other clients' fields work in the config file and the variables too.
func TestLoadConfigOtherClientsFields(t *testing.T) {
	p := writeConfigFile(t, "c.yaml", "mcp:\n  servers:\n    cline:\n      command: x\n      disabled: true\n      timeout: 30\n    windsurf:\n      serverUrl: https://mcp.example.test/mcp\n")
	c := loadOK(t, testEnv{"VOLCANIC_CONFIG": p, "HOME": "/h"}, "MCP__SERVERS__ENVONLY__COMMAND=y", "MCP__SERVERS__ENVONLY__DISABLED=true",
		"MCP__SERVERS__ENVONLY__TIMEOUT=5", "MCP__SERVERS__ENVONLY__TOOL-PREFIX=e_")
	byName := map[string]mcpconfig.ServerConfig{}
	for _, s := range c.MCPServers {
		byName[s.Name] = s
	}
	if s := byName["cline"]; s.Enabled || s.CallTimeout != 30*time.Second {
		t.Errorf("cline: enabled %v call timeout %v", s.Enabled, s.CallTimeout)
	}
	if s := byName["windsurf"]; s.URL != "https://mcp.example.test/mcp" {
		t.Errorf("windsurf: url %q", s.URL)
	}
	if s := byName["envonly"]; s.Enabled || s.CallTimeout != 5*time.Second || s.ToolPrefix != "e_" {
		t.Errorf("envonly: enabled %v call timeout %v prefix %q", s.Enabled, s.CallTimeout, s.ToolPrefix)
	}
}

func ptr[T any](v T) *T { return &v }
