package mcpconfig

import (
	"strings"
	"testing"
)

// The server names other clients write are accepted as they are: Cline's
// marketplace names ("github.com/upstash/context7-mcp") made the whole
// configuration invalid and the bot refused to start. Such a name gets a
// safe internal name (for tools, files and logs), unique among the
// servers; the original is kept for /mcp and the lookups.
func TestOtherClientsServerNames(t *testing.T) {
	data := `{"mcpServers": {
		"github.com/upstash/context7-mcp": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]},
		"github.com:upstash/context7-mcp": {"command": "/bin/cat"},
		"github.com_upstash_context7-mcp": {"command": "/bin/cat"},
		"@scope/Server Ω": {"command": "/bin/cat"},
		"плагин": {"command": "/bin/cat"},
		"fetch": {"command": "/bin/cat"}
	}}`
	servers, err := ParseSettings([]byte(data), "settings test")
	if err != nil {
		t.Fatalf("a snippet as other clients write it refused: %v", err)
	}
	merged := Merge(nil, nil, nil, servers)
	if len(merged) != 6 {
		t.Fatalf("%d servers, want 6", len(merged))
	}
	seen := map[string]string{}
	for _, s := range merged {
		if !ValidServerName(s.Name) {
			t.Errorf("internal name %q (of %q) is not a safe name", s.Name, s.Display())
		}
		if other, ok := seen[s.Name]; ok {
			t.Errorf("%q and %q share the internal name %q", other, s.Display(), s.Name)
		}
		seen[s.Name] = s.Display()
	}
	byDisplay := map[string]ServerConfig{}
	for _, s := range merged {
		byDisplay[s.Display()] = s
	}
	c7 := byDisplay["github.com/upstash/context7-mcp"]
	if c7.Name != "github.com_upstash_context7-mcp-2" && c7.Name != "github.com_upstash_context7-mcp" {
		t.Errorf("context7's internal name %q", c7.Name)
	}
	// The plain name an entry spells keeps it: it is what the user calls it.
	if plain := byDisplay["github.com_upstash_context7-mcp"]; plain.Name != "github.com_upstash_context7-mcp" || plain.Label != "" {
		t.Errorf("a valid name was changed: %q (label %q)", plain.Name, plain.Label)
	}
	if f := byDisplay["fetch"]; f.Name != "fetch" || f.Label != "" {
		t.Errorf("fetch: %+v", f)
	}
	for _, s := range merged {
		if s.Label != "" && !strings.Contains(strings.Join(s.Warnings, "\n"), s.Name) {
			t.Errorf("%q: no word of its internal name %q in the warnings %q", s.Label, s.Name, s.Warnings)
		}
	}
}

// A name no client could mean is still refused, with the reason: empty,
// control characters, or longer than the longest name kept.
func TestServerNamesRefused(t *testing.T) {
	for _, name := range []string{"", "a\nb", "tab\there", strings.Repeat("x", MaxServerLabelLen+1)} {
		_, err := ParseEntry(name, []byte(`{"command": "/bin/cat"}`), SourceSettings, "test")
		if err == nil {
			t.Errorf("%q accepted", name)
		}
	}
}

// The same original name in two sources is one server: the first source
// wins it, as for any name.
func TestLabelledNamesShadowAcrossSources(t *testing.T) {
	first, err := ParseEntry("github.com/a/b", []byte(`{"command": "/bin/cat"}`), SourceConfig, "config")
	if err != nil {
		t.Fatal(err)
	}
	second, err := ParseEntry("github.com/a/b", []byte(`{"command": "/bin/echo"}`), SourceSettings, "settings")
	if err != nil {
		t.Fatal(err)
	}
	merged := Merge(nil, []ServerConfig{first}, nil, []ServerConfig{second})
	if len(merged) != 1 || merged[0].Command != "/bin/cat" {
		t.Errorf("merged %+v", merged)
	}
}

// Whatever the name, the internal one is valid — a file name with no
// separator, never "." or ".." — and a valid name is kept.
func FuzzSafeServerName(f *testing.F) {
	for _, s := range []string{"github.com/upstash/context7-mcp", "../../etc/passwd", "плагин", "@scope/x", "a b", "", "..",
		strings.Repeat("ab/", 40), "fetch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		safe := SafeServerName(name)
		if !ValidServerName(safe) || strings.ContainsAny(safe, `/\`) || safe == "." || safe == ".." {
			t.Fatalf("SafeServerName(%q) = %q", name, safe)
		}
		if ValidServerName(name) && safe != name {
			t.Fatalf("a valid name %q became %q", name, safe)
		}
	})
}
