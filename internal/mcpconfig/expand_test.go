package mcpconfig

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stubEnv is an Environment over fixed maps: base is the filtered host
// environment a child gets, host what ${env:NAME} can read.
type stubEnv struct {
	base map[string]string
	host map[string]string
	got  *map[string]*string // the explicit entries Apply received
}

func (f stubEnv) Apply(explicit map[string]*string) []string {
	if f.got != nil {
		*f.got = maps.Clone(explicit)
	}
	m := maps.Clone(f.base)
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range explicit {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = *v
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func (f stubEnv) Lookup(name string) (string, bool) {
	v, ok := f.host[name]
	return v, ok
}

func TestExpand(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "fake-mcp")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "not-exec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const ws = "/data/chats/42"
	base := map[string]string{"PATH": "relative:" + bin, "HOME": "/home/bot", "NODE_OPTIONS": "--x"}
	host := map[string]string{"GITHUB_TOKEN": "ghp_secret", "EMPTY": ""}

	tests := []struct {
		name     string
		cfg      ServerConfig
		want     Spawn
		explicit map[string]*string
	}{
		{
			name: "workspace and host variables everywhere",
			cfg: ServerConfig{
				Name: "gh", Command: "fake-mcp",
				Args: []string{"--out", "${workspace}/browser", "${env:GITHUB_TOKEN}", "${foo}", "${workspace"},
				Env: map[string]*string{
					"GITHUB_TOKEN": cfgPtr("${env:GITHUB_TOKEN}"),
					"MIXED":        cfgPtr("a=${env:GITHUB_TOKEN};ws=${workspace};${env:UNSET}|${env:EMPTY}|${other}|${env:}"),
					"NODE_OPTIONS": nil,
				},
			},
			want: Spawn{
				Command: exe,
				Args:    []string{"--out", ws + "/browser", "ghp_secret", "", "${workspace"},
				Dir:     ws,
				Env: []string{"GITHUB_TOKEN=ghp_secret", "HOME=/home/bot",
					"MIXED=a=ghp_secret;ws=" + ws + ";|||${env:}", "PATH=relative:" + bin},
			},
		},
		{
			name: "absolute cwd and command",
			cfg:  ServerConfig{Name: "a", Command: "${workspace}/bin/srv", Cwd: "${workspace}/sub"},
			want: Spawn{Command: ws + "/bin/srv", Dir: ws + "/sub",
				Env: []string{"HOME=/home/bot", "NODE_OPTIONS=--x", "PATH=relative:" + bin}},
		},
		{
			name: "relative cwd is under the workspace",
			cfg:  ServerConfig{Name: "a", Command: "/usr/bin/env", Cwd: "tmp/x"},
			want: Spawn{Command: "/usr/bin/env", Dir: ws + "/tmp/x",
				Env: []string{"HOME=/home/bot", "NODE_OPTIONS=--x", "PATH=relative:" + bin}},
		},
		{
			name: "Claude Code's forms, defaults and escapes",
			cfg: ServerConfig{Name: "cc", Command: "${BIN_DIR:-/nonexistent}/x", Cwd: "${SUB:-sub}",
				Args: []string{"--token=${GITHUB_TOKEN}", "${EMPTY:-fallback}", "${UNSET:-}", "$${workspace}", "$${GITHUB_TOKEN:-x}", "$$", "a$b"},
				Env:  map[string]*string{"LEVEL": cfgPtr("${LEVEL:-info}"), "T": cfgPtr("${GITHUB_TOKEN:-none}")}},
			want: Spawn{Command: "/nonexistent/x", Dir: ws + "/sub",
				Args: []string{"--token=ghp_secret", "fallback", "", "${workspace}", "${GITHUB_TOKEN:-x}", "$$", "a$b"},
				Env:  []string{"HOME=/home/bot", "LEVEL=info", "NODE_OPTIONS=--x", "PATH=relative:" + bin, "T=ghp_secret"}},
		},
		{
			name: "a host value is not expanded again",
			cfg:  ServerConfig{Name: "a", Command: "/bin/x", Env: map[string]*string{"V": cfgPtr("${env:TRICK}")}},
			want: Spawn{Command: "/bin/x", Dir: ws,
				Env: []string{"HOME=/home/bot", "NODE_OPTIONS=--x", "PATH=relative:" + bin, "V=${workspace}"}},
		},
	}
	host["TRICK"] = "${workspace}"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]*string
			sp, err := tt.cfg.Expand(Dirs{Workspace: ws}, stubEnv{base: base, host: host, got: &got})
			if err != nil {
				t.Fatal(err)
			}
			if sp.Command != tt.want.Command || sp.Dir != tt.want.Dir || !slices.Equal(sp.Args, tt.want.Args) || !slices.Equal(sp.Env, tt.want.Env) {
				t.Errorf("got  %+v\nwant %+v", sp, tt.want)
			}
			if _, nulled := tt.cfg.Env["NODE_OPTIONS"]; nulled {
				if v, ok := got["NODE_OPTIONS"]; !ok || v != nil {
					t.Errorf("null did not reach Apply as a removal: %v %v", v, ok)
				}
			}
		})
	}
	if *tests[0].cfg.Env["GITHUB_TOKEN"] != "${env:GITHUB_TOKEN}" {
		t.Error("Expand modified the config")
	}
}

func TestExpandCommandNotFound(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("x"), 0o644); err != nil { // not executable
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{"not in child PATH", bin, `command "npx" not found in PATH`},
		{"relative entries skipped", ".:bin", `command "npx" not found in PATH`},
		{"no PATH", "", `command "npx" not found in PATH (PATH is empty in the server's environment)`},
	}
	// The bot's own PATH must not matter: put a real npx-like binary there.
	t.Setenv("PATH", "/usr/bin:/bin")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := map[string]string{}
			if tt.path != "" {
				base["PATH"] = tt.path
			}
			_, err := ServerConfig{Name: "gh", Command: "npx"}.Expand(Dirs{Workspace: "/ws"}, stubEnv{base: base})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if !errors.Is(err, ErrCommandNotFound) {
				t.Error("not ErrCommandNotFound")
			}
		})
	}
	// Found through the child's PATH even though the bot's PATH lacks it.
	if err := os.Chmod(filepath.Join(bin, "npx"), 0o755); err != nil {
		t.Fatal(err)
	}
	sp, err := ServerConfig{Name: "gh", Command: "npx"}.Expand(Dirs{Workspace: "/ws"}, stubEnv{base: map[string]string{"PATH": "/nonexistent:" + bin}})
	if err != nil || sp.Command != filepath.Join(bin, "npx") {
		t.Errorf("got %q, %v", sp.Command, err)
	}
}

func TestExpandNeedsEnvironment(t *testing.T) {
	_, err := ServerConfig{Name: "a", Command: "/bin/x"}.Expand(Dirs{Workspace: "/ws"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no environment") {
		t.Errorf("err = %v", err)
	}
}

func TestExpandVars(t *testing.T) {
	lookup := func(n string) (string, bool) { v, ok := map[string]string{"A": "1"}[n]; return v, ok }
	for in, want := range map[string]string{
		"":                           "",
		"plain":                      "plain",
		"${workspace}":               "/w",
		"x${workspace}y${workspace}": "x/wy/w",
		"${env:A}${env:B}":           "1",
		"${":                         "${",
		"$${workspace}":              "${workspace}",
		"$$${workspace}":             "$${workspace}",
		"${unknown}/${workspace}":    "//w",
		"${env:A":                    "${env:A",
		"${A}${A:-x}${B:-y}${B:-}":   "11y",
		"${A:-${B}}":                 "1", // the default's ${B} is in it (nested_test.go)
		"${1A}${A-x}${a b}${env:}":   "${1A}${A-x}${a b}${env:}",
		"$${A} ${A}":                 "${A} 1",
		"127.0.0.1:${port}":          "127.0.0.1:${port}",
	} {
		if got := expandVars(in, "/w", "", lookup); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

// A relative command with a slash means from the bot's working directory,
// not from the workspace the process runs in.
func TestExpandRelativeCommand(t *testing.T) {
	cfg := ServerConfig{Name: "x", Command: "tools/bin/server"}
	sp, err := cfg.Expand(Dirs{Workspace: t.TempDir()}, stubEnv{})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if sp.Command != filepath.Join(wd, "tools/bin/server") {
		t.Errorf("command = %s", sp.Command)
	}
}

// An unset variable without a default, anywhere it is expanded, is a
// warning (the server gets an empty value); one with a default is not; an
// escaped one is not a reference.
func TestUnsetAndArgVariables(t *testing.T) {
	c := ServerConfig{Command: "${TOOLS:-/opt}/srv", Args: []string{"--k=${API_KEY}", "${env:TOKEN}", "$${NOT_A_REF}"},
		Cwd: "${WORK_DIR}", Env: map[string]*string{"A": cfgPtr("${SET}"), "B": cfgPtr("${EMPTY}"), "C": nil},
		URL: "https://${HOST}/mcp", Headers: map[string]string{"Authorization": "Bearer ${API_KEY}", "X": "${OPT:-1}"},
		OAuth: OAuthConfig{ClientID: "${CLIENT_ID:-bot}", ClientSecret: "${env:CLIENT_SECRET}", ClientMetadataURL: "https://${META_HOST}/c.json"}}
	lookup := func(n string) (string, bool) { v, ok := map[string]string{"SET": "1", "EMPTY": ""}[n]; return v, ok }
	if got, want := c.UnsetVariables(lookup), []string{"API_KEY", "CLIENT_SECRET", "EMPTY", "HOST", "META_HOST", "TOKEN", "WORK_DIR"}; !slices.Equal(got, want) {
		t.Errorf("UnsetVariables = %v, want %v", got, want)
	}
	if got, want := c.ArgVariables(), []string{"API_KEY", "TOKEN", "TOOLS"}; !slices.Equal(got, want) {
		t.Errorf("ArgVariables = %v, want %v", got, want)
	}
}

// A url server's oauth client id, secret and metadata URL are expanded
// like its headers; its scopes are taken as written.
func TestExpandOAuth(t *testing.T) {
	host := map[string]string{"OAUTH_ID": "bot-1", "OAUTH_SECRET": "cs-0123456789", "EMPTY": "", "META": "meta.example"}
	for _, tt := range []struct {
		name string
		in   OAuthConfig
		want OAuthConfig
	}{
		{"literal", OAuthConfig{ClientID: "bot", ClientSecret: "s3cret", Scopes: []string{"a", "${B}"}},
			OAuthConfig{ClientID: "bot", ClientSecret: "s3cret", Scopes: []string{"a", "${B}"}}},
		{"variables", OAuthConfig{ClientID: "${OAUTH_ID}", ClientSecret: "${env:OAUTH_SECRET}", ClientMetadataURL: "https://${META}/client.json"},
			OAuthConfig{ClientID: "bot-1", ClientSecret: "cs-0123456789", ClientMetadataURL: "https://meta.example/client.json"}},
		{"defaults", OAuthConfig{ClientID: "${UNSET:-fallback}", ClientSecret: "${EMPTY:-def}", ClientMetadataURL: "${UNSET}"},
			OAuthConfig{ClientID: "fallback", ClientSecret: "def"}},
		{"escaped", OAuthConfig{ClientSecret: "$${OAUTH_SECRET}"}, OAuthConfig{ClientSecret: "${OAUTH_SECRET}"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ServerConfig{Name: "r", URL: "https://x/mcp", OAuth: tt.in}
			sp, err := c.Expand(Dirs{Workspace: "/ws"}, stubEnv{host: host})
			if err != nil {
				t.Fatal(err)
			}
			got := sp.OAuth
			if got.ClientID != tt.want.ClientID || got.ClientSecret != tt.want.ClientSecret || got.ClientMetadataURL != tt.want.ClientMetadataURL ||
				!slices.Equal(got.Scopes, tt.want.Scopes) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
