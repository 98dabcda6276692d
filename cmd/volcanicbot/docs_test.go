package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// docs/configuration.md names every configuration key and no other: the
// variables with their config-file keys, and the server entry fields (ours
// and the other clients' that are accepted).
func TestConfigurationDocNamesEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	vars, keys := tableColumns(t, section(t, doc, "## Environment variables and config-file keys"), 0, 1)
	fields, _ := tableColumns(t, section(t, doc, "### Server entry fields"), 0, -1)

	var wantVars, wantKeys []string
	for _, k := range configKeys {
		wantVars, wantKeys = append(wantVars, k.env), append(wantKeys, k.key)
	}
	wantVars = append(wantVars, configFileVar, mcpconfig.EnvPrefix+"<NAME>__<FIELD>")
	wantKeys = append(wantKeys, "mcp.servers.<name>.<field>")
	sameSet(t, "variables", vars, wantVars)
	sameSet(t, "config-file keys", keys, wantKeys)
	sameSet(t, "server entry fields", fields, mcpconfig.FieldNames())
}

// section is the text of doc from heading to the next heading of its level
// or higher.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/configuration.md has no %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	level := strings.Count(strings.Fields(heading)[0], "#")
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} `).FindAllStringIndex(rest, -1) {
		if n := strings.Count(rest[m[0]:m[1]], "#"); n <= level {
			return rest[:m[0]]
		}
	}
	return rest
}

// tableColumns returns the backticked names in columns a and b (b < 0: none)
// of the rows of the first Markdown table in s; "—" is skipped.
func tableColumns(t *testing.T, s string, a, b int) (colA, colB []string) {
	t.Helper()
	name := regexp.MustCompile("^`([^`]+)`$")
	rows := 0
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "|") {
			if rows > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		rows++
		if rows <= 2 { // header and separator
			continue
		}
		get := func(i int) string {
			if i < 0 || i >= len(cells) {
				return ""
			}
			m := name.FindStringSubmatch(strings.TrimSpace(cells[i]))
			if m == nil {
				return ""
			}
			return m[1]
		}
		if v := get(a); v != "" {
			colA = append(colA, v)
		} else {
			t.Errorf("a row without a name in column %d: %s", a, line)
		}
		if v := get(b); v != "" {
			colB = append(colB, v)
		}
	}
	return colA, colB
}

func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	for _, x := range w {
		if !slices.Contains(g, x) {
			t.Errorf("docs/configuration.md does not name the %s %q", what, x)
		}
	}
	for _, x := range g {
		if !slices.Contains(w, x) {
			t.Errorf("docs/configuration.md names %s %q, which is none", what, x)
		}
	}
	if len(slices.Compact(g)) != len(got) {
		t.Errorf("docs/configuration.md names some %s twice: %v", what, got)
	}
}

// compose.yaml hands the container every configuration variable: Coolify
// (before 4.0.0-beta.443) and docker compose pass only the variables it
// names, so one left out cannot be set on the deployment (TELEGRAM_ADMINS
// was: no admin could run /mcp login or /allow there).
func TestComposeNamesEveryVariable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bot, _, _ := strings.Cut(string(b), "\n  browser:") // the bot's service, not the optional browser's
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^      ([A-Z][A-Z0-9_]*): "?\$\{([A-Z][A-Z0-9_]*):-`).FindAllStringSubmatch(bot, -1) {
		if m[1] != m[2] {
			t.Errorf("compose.yaml sets %s from ${%s}", m[1], m[2])
		}
		named[m[1]] = true
	}
	want := []string{configFileVar}
	for _, k := range configKeys {
		want = append(want, k.env)
	}
	for _, v := range want {
		if !named[v] {
			t.Errorf("compose.yaml does not pass %s to the bot", v)
		}
	}
}
