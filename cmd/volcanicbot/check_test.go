package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/volcanicbot/volcanicbot/internal/document"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// asMainEnv makes the test binary run as volcanicbot itself: main(), with
// the command line after the binary's name.
const asMainEnv = "VOLCANICBOT_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	fakemcp.MainIfRequested()
	if len(os.Args) > 1 && os.Args[1] == extractCommand { // the bot's document reader (chatside.go)
		os.Exit(document.Serve(os.Args[2:], os.Stdin, os.Stdout))
	}
	if os.Getenv(asMainEnv) != "" { // the test binary as volcanicbot itself (privileges_linux_test.go)
		main()
	}
	os.Exit(m.Run())
}

var _ mcpconfig.Environment = (*redact.EnvFilter)(nil)
var _ mcpclient.Redactor = (*redact.Registry)(nil)

// writeSettings writes an agent dir whose settings.json names the fake
// server in each of the given mode sets, and returns the dir.
func writeSettings(t *testing.T, servers map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	entries := map[string]any{}
	for name, modes := range servers {
		l := fakemcp.Command(modes...)
		entries[name] = map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 5}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": entries})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func baseEnviron(t *testing.T, agentDir string) []string {
	return []string{
		"HOME=" + t.TempDir(),
		"PATH=" + os.Getenv("PATH"),
		"VOLCANIC_AGENT_DIR=" + agentDir,
		"VOLCANIC_DATA_DIR=" + t.TempDir(),
		"LOG_FORMAT=json",
	}
}

func TestCheckPrintsTools(t *testing.T) {
	dir := writeSettings(t, map[string][]string{"fake": {fakemcp.ModeNormal}})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"configuration: ok", "SERVER", "fake", "ok", "~TOKENS", "echo", "weird_name_x", "tools offered to the model"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckFailsOnABrokenServer(t *testing.T) {
	dir := writeSettings(t, map[string][]string{
		"good":   {fakemcp.ModeNormal},
		"broken": {fakemcp.ModeCrashOnStart},
	})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out.String())
	}
	for _, want := range []string{"broken", "failed", "exited (1) during start-up", "Traceback", "good"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCheckFailsOnInvalidConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"mcpServers":{"x":{"command":"npx","toolPrefx":"a_"}}}`), 0o600)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "configuration: invalid") || !strings.Contains(out.String(), `toolPrefx`) {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestCheckKeepsSecretsOutOfTheOutput(t *testing.T) {
	dir := writeSettings(t, map[string][]string{"broken": {fakemcp.ModeCrashOnStart}})
	// The crash traceback includes FAKE_MCP_DIE_MESSAGE: make it a secret.
	const secret = "sk-check-secret-0123456789"
	b, _ := os.ReadFile(filepath.Join(dir, "settings.json"))
	b = bytes.Replace(b, []byte(`"env":{`), []byte(`"env":{"FAKE_MCP_DIE_MESSAGE":"key `+secret+`",`), 1)
	os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600)
	env := append(baseEnviron(t, dir), "OPENAI_API_KEY="+secret)
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"check"}, &out, &errOut, env)
	if strings.Contains(out.String()+errOut.String(), secret) {
		t.Errorf("the secret leaked:\n%s\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "[REDACTED]") {
		t.Errorf("no redaction marker:\n%s", out.String())
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"frobnicate"}, &out, &errOut, nil); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if code := run(context.Background(), []string{"version"}, &out, &errOut, nil); code != 0 || !strings.Contains(out.String(), "volcanicbot") {
		t.Errorf("version: exit %d, %q", code, out.String())
	}
}

// A server whose only tools are refused (every name is another server's)
// offers nothing: check says so, counts neither its tools nor their tokens,
// and fails. And check leaves no discovery folder behind.
func TestCheckCountsOnlyOfferedTools(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := writeSettings(t, map[string][]string{"a": {fakemcp.ModeNormal}, "b": {fakemcp.ModeNormal}})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, append(baseEnviron(t, dir), "TMPDIR="+tmp))
	if code != 1 {
		t.Errorf("exit %d, want 1: b offers no tool\n%s", code, out.String())
	}
	var aLine, bLine string
	for _, l := range strings.Split(out.String(), "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 1 && f[0] == "a":
			aLine = l
		case len(f) > 1 && f[0] == "b":
			bLine = l
		}
	}
	if !strings.Contains(bLine, "refused") || !regexp.MustCompile(`\brefused\s+0 \(\+\d+ refused\)\s+0\s`).MatchString(bLine) {
		t.Errorf("b's line %q: want state refused, 0 tools (+N refused), 0 tokens\n%s", bLine, out.String())
	}
	if !strings.Contains(aLine, " ok ") {
		t.Errorf("a's line %q", aLine)
	}
	if !strings.Contains(out.String(), `MCP server "a" already provides`) {
		t.Errorf("no refusal line with the fix:\n%s", out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "volcanicbot-discover-*")); len(left) > 0 {
		t.Errorf("check left %v", left)
	}
}

// A secret written literally in a server's arguments (--api-key sk-…) is a
// known secret: /mcp <name> and check show the command line without it.
func TestLiteralArgumentSecretIsRedacted(t *testing.T) {
	dir := t.TempDir()
	l := fakemcp.Command(fakemcp.ModeNormal)
	entry := map[string]any{"command": l.Command, "args": []string{"--api-key", "sk-literal-0123456789abcdef"}, "env": l.Env}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"keyed": entry}})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := NewMain(io.Discard, baseEnviron(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := m.mcp.NewSession(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// /mcp keyed shows the command line, redacted whole with the secrets.
	st, err := s.ServerStatus("keyed")
	if text := m.secrets.Redact(st.Setup.Command); err != nil || strings.Contains(text, "sk-literal-0123456789abcdef") || !strings.Contains(text, "--api-key [REDACTED]") {
		t.Errorf("/mcp keyed: %s (%v)", text, err)
	}
}

// A pre-registered OAuth client's secret (oauthClientSecret) is a known
// secret: redacted from every log line and reply — written as it is, or
// as a ${VAR} the login expands.
func TestOAuthClientSecretIsRedacted(t *testing.T) {
	oauth := func(v string) map[string]any {
		return map[string]any{"url": "http://127.0.0.1:9/mcp", "oauthClientId": "volcanic", "oauthClientSecret": v}
	}
	// A secret header or env entry whose value is a ${VAR} of a harmless
	// name: the value as expanded is the secret.
	header := func(v string) map[string]any {
		return map[string]any{"url": "http://127.0.0.1:9/mcp", "headers": map[string]string{"Authorization": "Bearer " + v}}
	}
	env := func(v string) map[string]any {
		return map[string]any{"command": "true", "env": map[string]string{"SERVICE_API_KEY": v}}
	}
	for _, tc := range []struct {
		name    string
		entry   map[string]any
		environ string
		value   string
	}{
		{"literal", oauth("cs-literal-0123456789abcdef"), "", "cs-literal-0123456789abcdef"},
		{"variable", oauth("${REMOTE_CLIENT_CS}"), "REMOTE_CLIENT_CS=cs-variable-0123456789abcdef", "cs-variable-0123456789abcdef"},
		{"env form", oauth("${env:REMOTE_CLIENT_CS}"), "REMOTE_CLIENT_CS=cs-env-0123456789abcdef", "cs-env-0123456789abcdef"},
		{"default", oauth("${REMOTE_CLIENT_UNSET:-cs-default-0123456789abcdef}"), "", "cs-default-0123456789abcdef"},
		{"header variable", header("${REMOTE_SERVICE}"), "REMOTE_SERVICE=hv-variable-0123456789abcdef", "hv-variable-0123456789abcdef"},
		{"header default", header("${REMOTE_UNSET:-hv-default-0123456789abcdef}"), "", "hv-default-0123456789abcdef"},
		{"env variable", env("${MY_SERVICE}"), "MY_SERVICE=ev-variable-0123456789abcdef", "ev-variable-0123456789abcdef"},
		{"env default", env("${MY_UNSET:-ev-default-0123456789abcdef}"), "", "ev-default-0123456789abcdef"},
		{"env of a command not installed", map[string]any{"command": "no-such-server-installed",
			"env": map[string]string{"SERVICE_API_KEY": "${MY_SERVICE}"}}, "MY_SERVICE=ev-missing-0123456789abcdef", "ev-missing-0123456789abcdef"},
		{"arg variable", map[string]any{"command": "true", "args": []string{"--api-key", "${MY_ARG}"}},
			"MY_ARG=av-variable-0123456789abcdef", "av-variable-0123456789abcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": tc.entry}})
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			environ := baseEnviron(t, dir)
			if tc.environ != "" {
				environ = append(environ, tc.environ)
			}
			m, err := NewMain(io.Discard, environ)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.secrets.Redact("the secret is " + tc.value); strings.Contains(got, tc.value) {
				t.Errorf("redacted: %q", got)
			}
		})
	}
}

// check says which tools tool search defers and what the list costs, and
// warns of an alwaysLoad name the server does not offer.
func TestCheckShowsToolSearch(t *testing.T) {
	dir := t.TempDir()
	l := fakemcp.Command(fakemcp.ModeNormal)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": l.Command, "env": l.Env, "alwaysLoad": []string{"echo", "nope"}},
		"many": map[string]any{"command": l.Command, "env": map[string]string{fakemcp.EnvMode: fakemcp.ModeManyTools}, "deferLoading": false},
	}})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, append(baseEnviron(t, dir), "LLM_TOOL_SEARCH=on"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`LOADED`),
		regexp.MustCompile(`(?m)^fake +ok +16 +\d+ +1 \(~\d+\), 15 deferred `),
		regexp.MustCompile(`(?m)^many +ok +60 +\d+ +all `),
		regexp.MustCompile(`tool search \(LLM_TOOL_SEARCH=on\): on; 17 tools deferred`),
		regexp.MustCompile(`warning: server "fake": alwaysLoad names nope, which the server does not offer`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}

// check warns of a ${NAME} no variable sets (and not of one with a
// default), and of a secret put in a command line.
func TestCheckWarnsOfVariables(t *testing.T) {
	dir := t.TempDir()
	l := fakemcp.Command(fakemcp.ModeNormal)
	entry := map[string]any{"command": l.Command, "args": []string{"--token=${GITHUB_TOKEN}", "${LOG_DIR:-/tmp}"},
		"env": l.Env, "startupTimeoutSeconds": 5}
	entry["env"].(map[string]string)["REGION"] = "${MCP_REGION}"
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"vars": entry}})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"check"}, &out, &errOut, append(baseEnviron(t, dir), "GITHUB_TOKEN=ghp_0123456789abcdef0123"))
	for _, want := range []string{`${…} refers to MCP_REGION, not set`, `its command line holds GITHUB_TOKEN`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "LOG_DIR") {
		t.Errorf("a variable with a default is warned of:\n%s", out.String())
	}
}

// includeTools and excludeTools decide what the model is offered; check
// counts the rest as hidden, and warns of a pattern that matches nothing.
func TestCheckShowsFilteredTools(t *testing.T) {
	dir := t.TempDir()
	l := fakemcp.Command(fakemcp.ModeNormal)
	entry := map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 5,
		"includeTools": []string{"e*", "image", "nothing_*"}, "excludeTools": []string{"echo"}}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"picky": entry}})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir)); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	hidden := len(fakemcp.ToolNames(fakemcp.ModeNormal)) - 1
	for _, want := range []string{fmt.Sprintf("1 (+%d hidden)", hidden), `includeTools names "nothing_*", which matches no tool`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
