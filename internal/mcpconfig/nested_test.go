package mcpconfig

import (
	"slices"
	"strings"
	"testing"
)

// A default may hold references: ${PANEL_UNSET:-${workspace}/x} is the
// workspace's x when PANEL_UNSET is unset. Before, the first '}' ended the
// reference and the server got "${workspace/x}", with no warning.
func TestNestedDefaults(t *testing.T) {
	lookup := func(n string) (string, bool) {
		v, ok := map[string]string{"SET": "v", "B": "b", "EMPTY": ""}[n]
		return v, ok
	}
	for in, want := range map[string]string{
		"${PANEL_UNSET:-${workspace}/x}":    "/w/x",
		"${SET:-${workspace}/x}":            "v",
		"${EMPTY:-${workspace}}":            "/w",
		"${A:-${C:-deep}}":                  "deep",
		"${A:-${env:B}}":                    "b",
		"${A:-${B}-${SET}}":                 "b-v",
		"pre-${A:-${workspace}}-post":       "pre-/w-post",
		"${A:-${C:-${D:-three}}}/${SET}":    "three/v",
		"${A:-a}}":                          "a}",
		"${A:-$${workspace}}":               "${workspace}",
		"${A:-${unknown-ref}}":              "${unknown-ref}",
		"${A:-{not a ref}}":                 "{not a ref}",
		"127.0.0.1:${port}/${A:-${SET}}":    "127.0.0.1:${port}/v",
		"${SET:-${workspace}}${A:-${SET}}x": "vvx",
	} {
		if got := expandVars(in, "/w", "", lookup); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

// What a nested default refers to is checked like any reference: an unset
// variable there, reached because the outer one is unset, is a warning.
func TestNestedDefaultsUnsetVariables(t *testing.T) {
	c := ServerConfig{Args: []string{"${A:-${B}}", "${SET:-${C}}", "${D:-${E:-x}}"}}
	lookup := func(n string) (string, bool) { return map[string]string{"SET": "v"}[n], n == "SET" }
	if got := c.UnsetVariables(lookup); !slices.Equal(got, []string{"B"}) {
		t.Errorf("unset = %q, want [B]", got)
	}
	if got := c.ArgVariables(); !slices.Equal(got, []string{"A", "B", "C", "D", "E", "SET"}) {
		t.Errorf("arg variables = %q", got)
	}
}

// A reference that is never closed, or nested too deep, is refused with
// the field and the fix, in check and at start alike (ParseEntry).
func TestMalformedReferencesRefused(t *testing.T) {
	tests := []struct {
		entry string
		want  string
	}{
		{`{"command": "srv", "args": ["${PANEL_UNSET:-${workspace}/x"]}`, `args[0]: a ${ is not closed`},
		{`{"command": "srv", "env": {"K": "${A"}}`, `env.K`},
		{`{"url": "https://${HOST/mcp"}`, `url`},
		{`{"command": "srv", "args": ["${A:-${B:-${C:-${D:-${E:-${F:-x}}}}}}"]}`, `nested more than 4 deep`},
	}
	for _, tt := range tests {
		_, err := ParseEntry("s", []byte(tt.entry), SourceSettings, "test")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.entry, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), "$${") {
			t.Errorf("%s: the error does not say how to write a literal ${: %v", tt.entry, err)
		}
	}
	// The same entries as they were before still parse.
	for _, ok := range []string{`{"command": "srv", "args": ["${workspace}", "$${", "a}b", "${A:-${B}}"]}`} {
		if _, err := ParseEntry("s", []byte(ok), SourceSettings, "test"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// What the server is started with: the nested default expanded, in args,
// env and cwd alike.
func TestNestedDefaultsReachTheServer(t *testing.T) {
	c, err := ParseEntry("s", []byte(`{"command": "/bin/true", "args": ["--out", "${PANEL_UNSET:-${workspace}/x}"],
		"env": {"OUT": "${PANEL_UNSET:-${workspace}/y}"}, "cwd": "${PANEL_UNSET:-${workspace}/z}"}`), SourceSettings, "test")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]*string
	sp, err := c.Expand(Dirs{Workspace: "/data/chats/7"}, stubEnv{got: &got})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sp.Args, []string{"--out", "/data/chats/7/x"}) || *got["OUT"] != "/data/chats/7/y" || sp.Dir != "/data/chats/7/z" {
		t.Errorf("args %q, env OUT %q, dir %q", sp.Args, *got["OUT"], sp.Dir)
	}
}
