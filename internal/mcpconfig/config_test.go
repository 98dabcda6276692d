package mcpconfig

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func cfgPtr[T any](v T) *T { return &v }

func TestServerEntryConfigDefaults(t *testing.T) {
	c, err := ServerEntry{Command: "node"}.Config("github", SourceSettings, "settings x")
	if err != nil {
		t.Fatal(err)
	}
	want := ServerConfig{
		Name: "github", Source: SourceSettings, Origin: "settings x", Command: "node",
		Enabled: true, StartupTimeout: 60 * time.Second, CallTimeout: 120 * time.Second,
		IdleTimeout: 1800 * time.Second, StderrLevel: slog.LevelDebug, Roots: true,
	}
	if !equalConfig(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

// roots is on for a command (it runs in the workspace) whose args name no
// directory of its own, off for a url (a server elsewhere cannot see the
// bot's files); an entry says otherwise. server-filesystem, which serves
// the roots instead of its args' directories, gets a word on what it
// serves (roots_test.go).
func TestRootsAndSampling(t *testing.T) {
	tests := []struct {
		entry    string
		roots    bool
		sampling bool
		warned   bool
	}{
		{`{"command":"node"}`, true, false, false},
		{`{"url":"https://mcp.example.com/mcp"}`, false, false, false},
		{`{"command":"node","roots":false,"sampling":true}`, false, true, false},
		{`{"url":"https://mcp.example.com/mcp","roots":true}`, true, false, false},
		{`{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/notes"]}`, false, false, true},
		{`{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/notes"],"roots":false}`, false, false, true},
		{`{"command":"mcp-server-filesystem","roots":true}`, true, false, false},
	}
	for _, tt := range tests {
		c, err := ParseEntry("s", []byte(tt.entry), SourceSettings, "test")
		if err != nil {
			t.Fatalf("%s: %v", tt.entry, err)
		}
		warned := slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "server-filesystem") })
		if c.Roots != tt.roots || c.Sampling != tt.sampling || warned != tt.warned {
			t.Errorf("%s: roots %v, sampling %v, warned %v (%q); want %v, %v, %v", tt.entry, c.Roots, c.Sampling, warned, c.Warnings,
				tt.roots, tt.sampling, tt.warned)
		}
	}
}

// A package runner may install the package on its first start: it gets a
// longer start-up limit unless the entry sets one.
func TestInstallerStartupTimeout(t *testing.T) {
	tests := []struct {
		command string
		args    []string
		set     *float64
		want    time.Duration
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, nil, DefaultInstallerStartupTimeout},
		{"/usr/local/bin/npx", nil, nil, DefaultInstallerStartupTimeout},
		{"uvx", []string{"mcp-server-git"}, nil, DefaultInstallerStartupTimeout},
		{"bunx", nil, nil, DefaultInstallerStartupTimeout},
		{"pnpm", []string{"dlx", "x"}, nil, DefaultInstallerStartupTimeout},
		{"uv", []string{"tool", "run", "x"}, nil, DefaultInstallerStartupTimeout},
		{"pnpm", []string{"exec", "x"}, nil, DefaultStartupTimeout},
		{"node", []string{"server.js"}, nil, DefaultStartupTimeout},
		{"npx", nil, cfgPtr(15.0), 15 * time.Second},
	}
	for _, tt := range tests {
		c, err := ServerEntry{Command: tt.command, Args: tt.args, StartupTimeoutSeconds: tt.set}.Config("s", SourceSettings, "o")
		if err != nil {
			t.Fatal(err)
		}
		if c.StartupTimeout != tt.want {
			t.Errorf("%s %v: startup timeout %v, want %v", tt.command, tt.args, c.StartupTimeout, tt.want)
		}
	}
}

func TestServerEntryConfigValues(t *testing.T) {
	e := ServerEntry{
		Command: "srv", Args: []string{"-v"}, Env: map[string]*string{"A": cfgPtr("1"), "B": nil},
		Cwd: "sub", ToolPrefix: "gh_", Enabled: cfgPtr(false), Parallel: true,
		StartupTimeoutSeconds: cfgPtr(0.5), CallTimeoutSeconds: cfgPtr(3.0), IdleTimeoutSeconds: cfgPtr(0.0),
		StderrLevel: "DEBUG", PromptSection: "## X", ProtocolVersion: "2025-06-18",
	}
	c, err := e.Config("s", SourceConfig, "config f")
	if err != nil {
		t.Fatal(err)
	}
	if c.Enabled || !c.Parallel || c.StartupTimeout != 500*time.Millisecond || c.CallTimeout != 3*time.Second ||
		c.IdleTimeout != 0 || c.StderrLevel != slog.LevelDebug || c.ProtocolVersion != "2025-06-18" ||
		c.PromptSection != "## X" || c.ToolPrefix != "gh_" || c.Cwd != "sub" {
		t.Errorf("unexpected config %+v", c)
	}
	if v, ok := c.Env["B"]; !ok || v != nil {
		t.Errorf("env B = %v, %v; want present and nil", v, ok)
	}
	if *c.Env["A"] != "1" {
		t.Errorf("env A = %q", *c.Env["A"])
	}
	// The config does not share memory with the entry.
	*e.Env["A"] = "changed"
	e.Args[0] = "changed"
	if *c.Env["A"] != "1" || c.Args[0] != "-v" {
		t.Error("config aliases the entry's env or args")
	}
}

func TestStderrLevels(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "Info": slog.LevelInfo, "WARN": slog.LevelWarn,
		"Warning": slog.LevelWarn, "error": slog.LevelError, "": slog.LevelDebug,
	} {
		c, err := ServerEntry{Command: "x", StderrLevel: in}.Config("s", SourceSettings, "o")
		if err != nil || c.StderrLevel != want {
			t.Errorf("stderrLevel %q: got %v, %v; want %v", in, c.StderrLevel, err, want)
		}
	}
}

func TestServerEntryConfigRefusals(t *testing.T) {
	const origin = "settings /root/.volcanic/agent/settings.json"
	ok := ServerEntry{Command: "npx"}
	tests := []struct {
		name    string
		server  string
		entry   ServerEntry
		field   string
		message string
	}{
		{"empty command", "github", ServerEntry{}, "command",
			`settings /root/.volcanic/agent/settings.json: server "github": command must not be empty`},
		{"blank command", "github", ServerEntry{Command: "  "}, "command", `command must not be empty`},
		{"zero call timeout", "github", withEntry(ok, func(e *ServerEntry) { e.CallTimeoutSeconds = cfgPtr(0.0) }), "callTimeoutSeconds",
			`settings /root/.volcanic/agent/settings.json: server "github": callTimeoutSeconds must be positive (got 0)`},
		{"negative startup timeout", "github", withEntry(ok, func(e *ServerEntry) { e.StartupTimeoutSeconds = cfgPtr(-1.5) }), "startupTimeoutSeconds",
			`server "github": startupTimeoutSeconds must be positive (got -1.5)`},
		{"zero startup timeout", "github", withEntry(ok, func(e *ServerEntry) { e.StartupTimeoutSeconds = cfgPtr(0.0) }), "startupTimeoutSeconds",
			`startupTimeoutSeconds must be positive (got 0)`},
		{"no live process", "github", withEntry(ok, func(e *ServerEntry) { n := 0; e.MaxLive = &n }), "maxLive",
			`server "github": maxLive must be at least 1 (got 0)`},
		{"negative ceiling", "github", withEntry(ok, func(e *ServerEntry) { n := -3; e.MaxLive = &n }), "maxLive",
			`server "github": maxLive must be at least 1 (got -3)`},
		{"negative idle timeout", "github", withEntry(ok, func(e *ServerEntry) { e.IdleTimeoutSeconds = cfgPtr(-1.0) }), "idleTimeoutSeconds",
			`server "github": idleTimeoutSeconds must not be negative (got -1)`},
		{"huge timeout", "github", withEntry(ok, func(e *ServerEntry) { e.CallTimeoutSeconds = cfgPtr(1e300) }), "callTimeoutSeconds",
			`callTimeoutSeconds is too large`},
		{"prefix charset", "github", withEntry(ok, func(e *ServerEntry) { e.ToolPrefix = "gh." }), "toolPrefix",
			`server "github": toolPrefix "gh." may contain only A-Z, a-z, 0-9, '_' and '-'`},
		{"prefix mcp__", "github", withEntry(ok, func(e *ServerEntry) { e.ToolPrefix = "mcp__x" }), "toolPrefix",
			`server "github": toolPrefix "mcp__x" must not start with mcp__`},
		{"stderr level", "github", withEntry(ok, func(e *ServerEntry) { e.StderrLevel = "loud" }), "stderrLevel",
			`server "github": stderrLevel must be debug, info, warn or error (got "loud")`},
		{"protocol version", "github", withEntry(ok, func(e *ServerEntry) { e.ProtocolVersion = "2024-01-01" }), "protocolVersion",
			`server "github": protocolVersion must be one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28 (got "2024-01-01")`},
		{"env name", "github", withEntry(ok, func(e *ServerEntry) { e.Env = map[string]*string{"A=B": cfgPtr("x")} }), "env",
			`server "github": env has an invalid variable name "A=B"`},
		{"empty name", "", ok, "name", `settings /root/.volcanic/agent/settings.json: server name must not be empty`},
		// Other clients' spellings ("my server", "a/b", "-x") are accepted
		// (names_test.go); what no client could mean is refused.
		{"name with a newline", "my\nserver", ok, "name", `server name must not contain control characters`},
		{"name too long", strings.Repeat("a", MaxServerLabelLen+1), ok, "name", `server name must be at most 256 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.entry.Config(tt.server, SourceSettings, origin)
			if err == nil {
				t.Fatal("no error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%v is not a *ConfigError", err)
			}
			if ce.Field != tt.field || ce.Origin != origin || ce.Server != tt.server {
				t.Errorf("got field %q origin %q server %q; want %q %q %q", ce.Field, ce.Origin, ce.Server, tt.field, origin, tt.server)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not contain %q", err, tt.message)
			}
		})
	}
}

func TestServerEntryConfigCollectsAllErrors(t *testing.T) {
	e := ServerEntry{CallTimeoutSeconds: cfgPtr(0.0), ToolPrefix: "mcp__", StderrLevel: "x"}
	_, err := e.Config("bad\tname", SourceConfig, "config c.yaml")
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		if errors.As(e, &ce) {
			fields = append(fields, ce.Field)
		}
	}
	want := []string{"name", "command", "callTimeoutSeconds", "toolPrefix", "stderrLevel"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestServerNames(t *testing.T) {
	for _, n := range []string{"github", "GitHub", "a", "0", "my-server_2.x", strings.Repeat("z", 64)} {
		if !ValidServerName(n) {
			t.Errorf("%q refused", n)
		}
	}
	for _, n := range []string{"", ".x", "_x", "a b", "ä", "a:b", strings.Repeat("z", 65)} {
		if ValidServerName(n) {
			t.Errorf("%q accepted", n)
		}
	}
}

func TestParseSettings(t *testing.T) {
	const origin = "settings /home/u/.volcanic/agent/settings.json"
	data := []byte(`{
  "theme": "dark",
  "mcpServers": {
    "zeta": {"command": "z"},
    "Alpha": {"command": "a", "args": ["-y", "pkg"], "env": {"KEEP": "v", "DROP": null, "EMPTY": ""}},
    "mid": {"command": "m", "enabled": false, "idleTimeoutSeconds": 0, "promptSection": null}
  },
  "other": [1, 2, {"x": null}]
}`)
	got, err := ParseSettings(data, origin)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if c.Source != SourceSettings || c.Origin != origin {
			t.Errorf("%s: source %q origin %q", c.Name, c.Source, c.Origin)
		}
	}
	if want := []string{"zeta", "Alpha", "mid"}; !slices.Equal(names, want) {
		t.Errorf("order %v, want file order %v", names, want)
	}
	env := got[1].Env
	if v, ok := env["DROP"]; !ok || v != nil {
		t.Errorf("DROP = %v, %v; want present with nil (remove)", v, ok)
	}
	if v := env["EMPTY"]; v == nil || *v != "" {
		t.Errorf("EMPTY = %v; want empty string, distinct from null", v)
	}
	if !slices.Equal(got[1].Args, []string{"-y", "pkg"}) {
		t.Errorf("args %v", got[1].Args)
	}
	if got[2].Enabled || got[2].IdleTimeout != 0 {
		t.Errorf("mid: enabled %v idle %v", got[2].Enabled, got[2].IdleTimeout)
	}
}

func TestParseSettingsNoServers(t *testing.T) {
	for _, data := range []string{``, "  \n", `{}`, `{"mcpServers": null}`, `{"mcpServers": {}}`, `{"x": {"mcpServers": 1}}`} {
		got, err := ParseSettings([]byte(data), "o")
		if err != nil || len(got) != 0 {
			t.Errorf("%q: got %v, %v", data, got, err)
		}
	}
}

func TestParseSettingsRefusals(t *testing.T) {
	const origin = "settings s.json"
	tests := []struct {
		name, data string
		want       []string
	}{
		{"unknown field", `{"mcpServers": {"gh": {"command": "x", "toolPrefx": "a"}}}`,
			[]string{`settings s.json: server "gh": unknown field "toolPrefx" (did you mean "toolPrefix"?)`}},
		{"unknown field far from any", `{"mcpServers": {"gh": {"command": "x", "transport": "http://x"}}}`,
			[]string{`server "gh": unknown field "transport"`}},
		{"command and url", `{"mcpServers": {"gh": {"command": "x", "url": "http://x"}}}`,
			[]string{`server "gh": an entry has either a command (stdio) or a url (http), not both`}},
		{"http without url", `{"mcpServers": {"gh": {"type": "http"}}}`,
			[]string{`server "gh": url must not be empty for type http`}},
		{"oauthClientMetadataUrl not https", `{"mcpServers": {"gh": {"url": "https://x/mcp", "oauthClientMetadataUrl": "http://x/c.json"}}}`,
			[]string{`server "gh": oauthClientMetadataUrl must be an https URL`}},
		{"http with a bad url", `{"mcpServers": {"gh": {"url": "ftp://x"}}}`,
			[]string{`server "gh": url must be an http or https URL (got "ftp://x")`}},
		{"http with stdio fields", `{"mcpServers": {"gh": {"type": "http", "url": "https://x/mcp", "args": ["a"], "cwd": "/"}}}`,
			[]string{`server "gh": args applies only to a command (stdio) server`, `server "gh": cwd applies only to a command (stdio) server`}},
		{"sse", `{"mcpServers": {"gh": {"type": "sse", "url": "https://x/sse"}}}`,
			[]string{`server "gh": type sse (the old HTTP+SSE transport) is not supported`}},
		{"unknown type", `{"mcpServers": {"gh": {"type": "grpc", "url": "https://x"}}}`,
			[]string{`server "gh": type must be stdio or http (got "grpc")`}},
		{"bad header", `{"mcpServers": {"gh": {"url": "https://x", "headers": {"Bad Name": "v", "X": "a\nb"}}}}`,
			[]string{`server "gh": headers has an invalid header name "Bad Name"`, `server "gh": header X must be one line`}},
		{"wrong type", `{"mcpServers": {"gh": {"command": "x", "args": "-y"}}}`,
			[]string{`server "gh": args must be an array of strings (got string)`}},
		{"wrong env type", `{"mcpServers": {"gh": {"command": "x", "env": {"A": 1}}}}`,
			[]string{`server "gh": env.A must be a string or null (got number)`}},
		{"wrong timeout type", `{"mcpServers": {"gh": {"command": "x", "callTimeoutSeconds": "60"}}}`,
			[]string{`callTimeoutSeconds must be a number of seconds (got string)`}},
		{"null entry", `{"mcpServers": {"gh": null}}`, []string{`server "gh": entry must be an object (got null)`}},
		{"array entry", `{"mcpServers": {"gh": []}}`, []string{`server "gh": entry must be an object (got array)`}},
		{"servers not object", `{"mcpServers": []}`, []string{`settings s.json: mcpServers must be an object (got array)`}},
		{"root not object", `[]`, []string{`settings s.json: the root must be a JSON object`}},
		{"duplicate server", `{"mcpServers": {"gh": {"command": "x"}, "gh": {"command": "y"}}}`,
			[]string{`server "gh": the server is defined twice`}},
		{"all errors collected", `{"mcpServers": {"a": {"command": ""}, "b": {"command": "x", "stderrLevel": "no"}, "c": {"bad": 1}}}`,
			[]string{`server "a": command must not be empty`, `server "b": stderrLevel`, `server "c": unknown field "bad"`}},
		{"unknown fields and validation together", `{"mcpServers": {"a": {"uri": "x", "Command": "", "toolprefix": "mcp__", "zz": 1}}}`,
			[]string{`server "a": unknown field "uri"`, `server "a": unknown field "zz"`, `server "a": command must not be empty`, `server "a": toolPrefix "mcp__" must not start`}},
		{"type error and unknown field", `{"mcpServers": {"a": {"command": "x", "args": [1], "nope": true}}}`,
			[]string{`server "a": unknown field "nope"`, `server "a": args must be an array of strings (got number in the array)`}},
		{"syntax error", "{\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"x\",}\n  }\n}",
			[]string{`settings s.json: invalid JSON at line 3, column 27`}},
		{"truncated", "{\"mcpServers\": {\n", []string{`settings s.json: invalid JSON at line 2, column 1: unexpected end of file`}},
		{"trailing data", "{}\n{}", []string{`settings s.json: invalid JSON at line 2, column 1: invalid character '{' after top-level value`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSettings([]byte(tt.data), origin)
			if err == nil {
				t.Fatal("no error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("%v is not a *ConfigError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseSettingsKeepsValidEntries(t *testing.T) {
	got, err := ParseSettings([]byte(`{"mcpServers": {"a": {"command": "x"}, "b": {}}}`), "o")
	if err == nil || len(got) != 1 || got[0].Name != "a" {
		t.Errorf("got %v, %v; want a and an error for b", got, err)
	}
}

func TestLoadSettingsFile(t *testing.T) {
	dir := t.TempDir()
	if got, err := LoadSettingsFile(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("missing dir: %v, %v", got, err)
	}
	if got, err := LoadSettingsFile(dir); err != nil || got != nil {
		t.Errorf("missing file: %v, %v", got, err)
	}
	got, err := LoadSettingsFile(filepath.Join("testdata", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "github" || got[1].Name != "fetch" {
		t.Fatalf("got %+v", got)
	}
	if want := "settings " + filepath.Join("testdata", "config", "settings.json"); got[0].Origin != want {
		t.Errorf("origin %q, want %q", got[0].Origin, want)
	}

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "settings.json"), []byte(`{"mcpServers": {"x": {"command": "a", "toolprefix": "mcp__"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSettingsFile(bad)
	if err == nil || !strings.Contains(err.Error(), "settings "+filepath.Join(bad, "settings.json")+`: server "x": toolPrefix "mcp__" must not start with mcp__`) {
		t.Errorf("err = %v", err)
	}
}

func TestMergeServers(t *testing.T) {
	cfg := []ServerConfig{{Name: "github", Origin: "config c.yaml"}, {Name: "playwright", Origin: "config c.yaml"}}
	preset := []ServerConfig{{Name: "playwright", Origin: "preset playwright", Source: SourcePreset, Enabled: true}}
	settings := []ServerConfig{{Name: "zeta", Origin: "settings s"}, {Name: "github", Origin: "settings s"}, {Name: "GitHub", Origin: "settings s"}, {Name: "alpha", Origin: "settings s"}}

	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	got := Merge(logger, cfg, preset, settings)

	var names, origins []string
	for _, c := range got {
		names = append(names, c.Name)
		origins = append(origins, c.Origin)
	}
	if want := []string{"github", "playwright", "zeta", "GitHub", "alpha"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if origins[0] != "config c.yaml" || origins[1] != "config c.yaml" {
		t.Errorf("first source did not win: %v", origins)
	}
	log := buf.String()
	for _, want := range []string{
		`level=WARN msg="MCP: the playwright preset is skipped: a configured server has its name" server=playwright used="config c.yaml" ignored="preset playwright"`,
		`level=WARN msg="MCP server shadowed by an earlier source; ignoring it" server=github used="config c.yaml" ignored="settings s"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}
	if n := strings.Count(log, "shadowed"); n != 1 {
		t.Errorf("%d shadow warnings, want 1 (GitHub is another name)", n)
	}
	if got := Merge(nil, cfg, nil, cfg); len(got) != 2 {
		t.Errorf("nil logger: %v", got)
	}
}

func TestSortServers(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"B", "a", "A"}, []string{"A", "a", "B"}},
		{[]string{"github", "Fetch", "playwright", "fetch", "_"}, []string{"_", "Fetch", "fetch", "github", "playwright"}},
		{nil, nil},
	}
	for _, tt := range tests {
		var s []ServerConfig
		for _, n := range tt.in {
			s = append(s, ServerConfig{Name: n})
		}
		SortServers(s)
		var got []string
		for _, c := range s {
			got = append(got, c.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("SortServers(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDigest(t *testing.T) {
	base := func() ServerConfig {
		return ServerConfig{
			Name: "github", Command: "npx", Args: []string{"-y", "${workspace}/x"}, Cwd: "${workspace}",
			Env: map[string]*string{"A": cfgPtr("1"), "B": cfgPtr("2"), "C": cfgPtr("3"), "D": nil, "TOKEN": cfgPtr("${env:GITHUB_TOKEN}")},
		}
	}
	d := base().Digest()
	if len(d) != 64 {
		t.Fatalf("digest %q is not hex sha256", d)
	}
	for range 20 { // map iteration order varies between runs
		if got := base().Digest(); got != d {
			t.Fatal("digest is not stable under map order")
		}
	}
	same := base()
	same.Source, same.Origin, same.Enabled, same.CallTimeout, same.PromptSection = SourceSettings, "elsewhere", true, time.Hour, "x"
	if same.Digest() != d {
		t.Error("fields outside the key changed the digest")
	}
	noArgs, emptyArgs := base(), base()
	noArgs.Args, emptyArgs.Args = nil, []string{}
	if noArgs.Digest() != emptyArgs.Digest() {
		t.Error("nil and empty args differ")
	}

	changes := map[string]func(*ServerConfig){
		"name":             func(c *ServerConfig) { c.Name = "GitHub" },
		"command":          func(c *ServerConfig) { c.Command = "node" },
		"args":             func(c *ServerConfig) { c.Args = []string{"-y ${workspace}/x"} },
		"args split":       func(c *ServerConfig) { c.Args = []string{"-y", "${workspace}", "/x"} },
		"cwd":              func(c *ServerConfig) { c.Cwd = "" },
		"prefix":           func(c *ServerConfig) { c.ToolPrefix = "gh_" },
		"protocol":         func(c *ServerConfig) { c.ProtocolVersion = "2025-06-18" },
		"env value":        func(c *ServerConfig) { c.Env["A"] = cfgPtr("9") },
		"env null vs zero": func(c *ServerConfig) { c.Env["D"] = cfgPtr("") },
		"env removed":      func(c *ServerConfig) { delete(c.Env, "D") },
		"env key":          func(c *ServerConfig) { c.Env["a"] = c.Env["A"]; delete(c.Env, "A") },
	}
	seen := map[string]string{d: "base"}
	for name, change := range changes {
		c := base()
		change(&c)
		got := c.Digest()
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: digest equals %s's", name, prev)
		}
		seen[got] = name
	}
}

func TestDigestIgnoresWorkspaceAndSecrets(t *testing.T) {
	c := ServerConfig{Name: "gh", Command: "${workspace}/bin/srv", Env: map[string]*string{"T": cfgPtr("${env:GITHUB_TOKEN}")}}
	d := c.Digest()
	for _, ws := range []string{"/data/chats/1", "/data/chats/2"} {
		sp, err := c.Expand(Dirs{Workspace: ws}, stubEnv{host: map[string]string{"GITHUB_TOKEN": "ghp_" + ws}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Digest() != d {
			t.Error("expanding changed the digest")
		}
		if sp.Command != ws+"/bin/srv" {
			t.Errorf("command %q", sp.Command)
		}
	}
}

func withEntry(e ServerEntry, f func(*ServerEntry)) ServerEntry {
	f(&e)
	return e
}

func equalConfig(a, b ServerConfig) bool { return reflect.DeepEqual(a, b) }

func TestToolSearchFields(t *testing.T) {
	data := []byte(`{"mcpServers": {
  "gh": {"command": "g", "alwaysLoad": ["create_issue", " get_issue ", "create_issue"], "deferLoading": true},
  "ev": {"command": "e", "defer_loading": false},
  "plain": {"command": "p"}
}}`)
	got, err := ParseSettings(data, "o")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0].AlwaysLoad, []string{"create_issue", "get_issue"}) {
		t.Errorf("alwaysLoad %q, want trimmed and deduplicated", got[0].AlwaysLoad)
	}
	if got[0].DeferLoading == nil || !*got[0].DeferLoading {
		t.Errorf("gh deferLoading %v, want true", got[0].DeferLoading)
	}
	if got[1].DeferLoading == nil || *got[1].DeferLoading {
		t.Errorf("ev deferLoading %v, want false", got[1].DeferLoading)
	}
	if got[2].DeferLoading != nil || got[2].AlwaysLoad != nil {
		t.Errorf("plain: deferLoading %v alwaysLoad %v, want unset", got[2].DeferLoading, got[2].AlwaysLoad)
	}
	for _, bad := range []string{`{"mcpServers": {"x": {"command": "x", "alwaysLoad": "a"}}}`,
		`{"mcpServers": {"x": {"command": "x", "alwaysLoad": [""]}}}`,
		`{"mcpServers": {"x": {"command": "x", "deferLoading": "yes"}}}`} {
		if _, err := ParseSettings([]byte(bad), "o"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestMatchTool(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"browser_*", "browser_click", true},
		{"browser_*", "browser_", true},
		{"browser_*", "web_browser_click", false},
		{"*_file", "read_file", true},
		{"*_file", "read_files", false},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"get_?", "get_a", true},
		{"get_?", "get_ab", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyyd", false},
		{"weird.name/x", "weird.name/x", true},
		{"weird*/x", "weird.name/x", true},
		{"Echo", "echo", false},
		{"*é*", "café_au_lait", true},
		{"**a", "bba", true},
	}
	for _, tt := range tests {
		if got := MatchTool(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchTool(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func FuzzMatchTool(f *testing.F) {
	for _, s := range []string{"a*b", "*", "?", "x?y*z"} {
		f.Add(s, "axyb")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return
		}
		// Against path.Match with '/' and the class and escape characters
		// out of the way (they are literal here, special there).
		if strings.ContainsAny(pattern+name, "/[]\\\\") {
			return
		}
		want, err := path.Match(pattern, name)
		if err != nil {
			return
		}
		if got := MatchTool(pattern, name); got != want {
			t.Fatalf("MatchTool(%q, %q) = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

// The oauth fields of a url server may hold ${…} references, expanded at
// the login: an oauthClientMetadataUrl that is one is checked there.
func TestParseSettingsOAuthVariables(t *testing.T) {
	data := `{"mcpServers": {"r": {"url": "https://x/mcp", "oauthClientId": "${ID:-bot}", "oauthClientSecret": "${env:SECRET}",
		"oauthClientMetadataUrl": "${CIMD_URL}", "oauthScopes": ["read"]}}}`
	got, err := ParseSettings([]byte(data), "o")
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	want := OAuthConfig{ClientID: "${ID:-bot}", ClientSecret: "${env:SECRET}", ClientMetadataURL: "${CIMD_URL}", Scopes: []string{"read"}}
	if o := got[0].OAuth; o.ClientID != want.ClientID || o.ClientSecret != want.ClientSecret || o.ClientMetadataURL != want.ClientMetadataURL ||
		!slices.Equal(o.Scopes, want.Scopes) {
		t.Errorf("OAuth %+v, want %+v", o, want)
	}
}
