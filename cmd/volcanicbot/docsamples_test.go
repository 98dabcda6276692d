package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The samples in docs/deployment.md are what the image prints: `volcanicbot
// check` and the first lines of the log, with the real @playwright/mcp and
// Chromium, configured as the image and compose.yaml configure them. They
// had drifted (25 tools where there are 24, columns that had changed). In a
// sample "…" stands for any text; everything else must be as printed.

// imageEnviron is the environment of the image with compose.yaml's
// defaults, around the real browser, and its data directory.
func imageEnviron(t *testing.T, extra ...string) (environ []string, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	environ = append([]string{
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + t.TempDir(), "LOG_FORMAT=json",
		"TELEGRAM_ALLOWED_USERS=1", "LLM_PROVIDER=openai", "LLM_MODEL=test-model", "OPENAI_API_KEY=sk-docs-0123456789",
		// The image reads compose.yaml's memory limit (2 GiB) from its cgroup
		// (TestComposeMemoryLimitAndItsCeiling); here the machine's RAM would
		// be the budget.
		"VOLCANIC_MEMORY_LIMIT_MIB=2048",
	}, browserEnv(t)...)
	return append(environ, extra...), dataDir
}

func TestDeploymentDocCheckSample(t *testing.T) {
	environ, _ := imageEnviron(t, "TELEGRAM_BOT_TOKEN=123456789:AAdocs-sample-token_0123456789")
	var out, errOut testkit.SyncBuffer
	if code := run(context.Background(), []string{"check"}, &out, &errOut, environ); code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	sample := docBlock(t, "docs/deployment.md", "<!-- check sample")
	got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(got) != len(sample) {
		t.Errorf("check printed %d lines, the sample has %d", len(got), len(sample))
	}
	for i := range min(len(got), len(sample)) {
		if !globMatch(sample[i], got[i]) {
			t.Errorf("line %d:\nsample: %s\ncheck:  %s", i+1, sample[i], got[i])
		}
	}
	if t.Failed() {
		t.Logf("check's output:\n%s", out.String())
	}
	docsCountBrowserTools(t, out.String())
}

// docsCountBrowserTools holds every doc to what check counts of the
// browser's tools: /mcp's lines, the log's, check's rows (commands.md,
// browser.md, mcp.md and manual-testing.md said 25 where there are 24).
func docsCountBrowserTools(t *testing.T, check string) {
	t.Helper()
	row := regexp.MustCompile(`(?m)^playwright\s+ok\s+(\d+)\D.*?\s(\d+) \(~(\d+)\), (\d+) deferred`).FindStringSubmatch(check)
	if row == nil {
		t.Fatalf("no playwright row in check's output:\n%s", check)
	}
	tools, always, alwaysTokens, deferred := row[1], row[2], row[3], row[4]
	patterns := map[string][]string{ // a pattern, and what each of its groups must be
		`playwright: (?:running|not started), (\d+) tools`:                    {tools},
		`server=playwright tools=(\d+)`:                                       {tools},
		`(?m)^playwright\s+ok\s+(\d+)`:                                        {tools},
		`\btools \((\d+)\): browser_`:                                         {tools},
		`\b(\d+) \(~(\d+)\), (\d+) deferred`:                                  {always, alwaysTokens, deferred},
		`\((\d+) in every request, ~(\d+) tokens; (\d+) deferred, found with`: {always, alwaysTokens, deferred},
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	for _, path := range append(docs, filepath.Join("..", "..", "README.md")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for re, want := range patterns {
			for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(string(b), -1) {
				if !slices.Equal(m[1:], want) {
					t.Errorf("%s: %q, where check counts %v", filepath.Base(path), m[0], want)
				}
			}
		}
	}
}

func TestDeploymentDocLogSample(t *testing.T) {
	tg := newTelegram(t)
	model := llmtest.NewOpenAI(t)
	environ, dataDir := imageEnviron(t, "TELEGRAM_BOT_TOKEN="+tg.Token(), "TELEGRAM_API_URL="+tg.URL(),
		"OPENAI_BASE_URL="+model.URL, "HTTP_ADDR=:0", "METRICS_ADDR=127.0.0.1:0")
	logs := &testkit.SyncBuffer{}
	m, err := NewMain(logs, environ)
	if err != nil {
		t.Fatal(err)
	}
	m.TelegramLimits = unpaced
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := m.Run(ctx)
		m.Close()
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	if !testkit.Until(60*time.Second, func() bool { return strings.Contains(logs.String(), `"msg":"MCP catalogue ready"`) }) {
		t.Fatalf("no catalogue in the log:\n%s", logs.String())
	}

	// What differs between this machine and the image: the data directory
	// and the ports (here any free one).
	text := strings.ReplaceAll(logs.String(), `"data_dir":"`+dataDir+`"`, `"data_dir":"/data"`)
	text = regexp.MustCompile(`"addr":"\[::\]:\d+"`).ReplaceAllString(text, `"addr":"[::]:8080"`)
	text = regexp.MustCompile(`"addr":"127\.0\.0\.1:\d+"`).ReplaceAllString(text, `"addr":"127.0.0.1:9464"`)
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a log line that is not JSON: %s", line)
		}
		records = append(records, r)
	}
	for _, line := range docBlock(t, "docs/deployment.md", "<!-- log sample") {
		var want map[string]any
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("a sample line that is not JSON: %s", line)
		}
		if !slices.ContainsFunc(records, func(r map[string]any) bool { return sameRecord(want, r) }) {
			t.Errorf("no log line is like the sample's\n%s", line)
		}
	}
	if t.Failed() {
		t.Logf("the log:\n%s", text)
	}
}

// sameRecord reports whether a log record has the sample's keys, and its
// values: equal, or matching where the sample's has "…".
func sameRecord(want, got map[string]any) bool {
	if len(want) != len(got) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		ws, isString := w.(string)
		if isString && strings.Contains(ws, "…") {
			gs, ok := g.(string)
			if !ok || !globMatch(ws, gs) {
				return false
			}
			continue
		}
		if fmt.Sprint(w) != fmt.Sprint(g) {
			return false
		}
	}
	return true
}

// globMatch reports whether s is pattern with each "…" standing for any
// text.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "…")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// docBlock is the fenced block after marker in a doc file, its lines
// without their common indentation.
func docBlock(t *testing.T, path, marker string) []string {
	t.Helper()
	doc := readRepoFile(t, path)
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", path, marker)
	}
	lines := strings.Split(doc[i:], "\n")[1:]
	indent := lines[0][:len(lines[0])-len(strings.TrimLeft(lines[0], " "))]
	if strings.TrimSpace(lines[0]) != "```" {
		t.Fatalf("%s: no fenced block after %q", path, marker)
	}
	var out []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "```" {
			return out
		}
		out = append(out, strings.TrimPrefix(l, indent))
	}
	t.Fatalf("%s: the block after %q does not end", path, marker)
	return nil
}

// The checklists of a first deployment name the same variables —
// docs/deployment.md's Coolify steps, deploy/coolify.md and compose.yaml's
// header — with the admin among them (TELEGRAM_ADMINS was missing: no
// admin, no /allow, no /mcp login); and the variables they warn not to
// empty are those compose.yaml gives a value.
func TestDeploymentChecklists(t *testing.T) {
	deployment, coolify, compose := readRepoFile(t, "docs/deployment.md"), readRepoFile(t, "deploy/coolify.md"), readRepoFile(t, "compose.yaml")
	names := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	words := regexp.MustCompile(`\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b`)
	set := func(re *regexp.Regexp, s string) []string {
		var out []string
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	between := func(s, from, to string) string {
		_, rest, ok := strings.Cut(s, from)
		if !ok {
			t.Fatalf("no %q", from)
		}
		part, _, _ := strings.Cut(rest, to)
		return part
	}
	want := []string{"ANTHROPIC_API_KEY", "LLM_MODEL", "LLM_PROVIDER", "OPENAI_API_KEY", "TELEGRAM_ADMINS", "TELEGRAM_ALLOWED_USERS", "TELEGRAM_BOT_TOKEN"}
	for name, got := range map[string][]string{
		"docs/deployment.md's Coolify step 5": set(names, firstCells(between(deployment, "5. **Environment variables.**", "For the token and the keys"))),
		"deploy/coolify.md's checklist":       set(names, between(coolify, "| Environment variables |", "\n")),
		"compose.yaml's header":               set(words, between(compose, "Set at least", "An empty value")),
	} {
		if !slices.Equal(got, want) {
			t.Errorf("%s names %v, want %v", name, got, want)
		}
	}

	var valued []string
	for _, m := range regexp.MustCompile(`(?m)^      ([A-Z][A-Z0-9_]*): "?\$\{[A-Z0-9_]+:-([^}"]+)\}`).FindAllStringSubmatch(compose, -1) {
		valued = append(valued, m[1])
	}
	slices.Sort(valued)
	for name, got := range map[string][]string{
		"docs/deployment.md's \"Don't empty\"":      set(names, between(deployment, "Don't empty the variables that come with a value", "to the bot an empty")),
		"deploy/coolify.md's \"Empty means unset\"": set(names, between(coolify, "Don't blank the non-empty defaults", "To the bot")),
	} {
		if !slices.Equal(got, valued) {
			t.Errorf("%s names %v; compose.yaml gives %v a value", name, got, valued)
		}
	}
}

// firstCells are the first cells of the Markdown table rows in s, one a line.
func firstCells(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if cells := strings.Split(strings.TrimSpace(line), "|"); len(cells) > 2 {
			out = append(out, cells[1])
		}
	}
	return strings.Join(out, "\n")
}

// docs/deployment.md's table of the image's defaults is the Dockerfile's
// ENV (HOME aside): every variable, with its value.
func TestDeploymentDocImageDefaults(t *testing.T) {
	dockerfile := readRepoFile(t, "Dockerfile")
	i := strings.Index(dockerfile, "\nENV VOLCANIC_DATA_DIR=")
	if i < 0 {
		t.Fatal("the Dockerfile has no ENV VOLCANIC_DATA_DIR=… block")
	}
	env := map[string]string{}
	for _, line := range strings.Split(dockerfile[i+len("\nENV "):], "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(strings.TrimSuffix(line, "\\")), "=")
		if !ok {
			break
		}
		if name != "HOME" {
			env[name] = strings.TrimSpace(value)
		}
		if !strings.HasSuffix(line, "\\") {
			break
		}
	}
	doc := readRepoFile(t, "docs/deployment.md")
	_, table, _ := strings.Cut(doc, "| Variable | In the image | Why |")
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| `([^`]*)` \\|").FindAllStringSubmatch(table, -1) {
		documented[m[1]] = m[2]
	}
	for name, value := range env {
		if documented[name] != value {
			t.Errorf("the image sets %s=%s; docs/deployment.md says %q", name, value, documented[name])
		}
	}
	for name := range documented {
		if _, ok := env[name]; !ok {
			t.Errorf("docs/deployment.md lists %s, which the image does not set", name)
		}
	}
}
