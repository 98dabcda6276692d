package mcpconfig

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Snippets written for other clients work as they are: their fields map
// onto ours or are kept with a warning, and their top-level shapes are read.
func TestOtherClientsSnippets(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		check  func(t *testing.T, c ServerConfig)
		warned []string
	}{
		{"Cline", `{"mcpServers": {"x": {"command": "/bin/cat", "args": [], "disabled": false, "timeout": 60, "autoApprove": ["read_file"]}}}`,
			func(t *testing.T, c ServerConfig) {
				if !c.Enabled || c.CallTimeout != 60*time.Second || !slices.Equal(c.AutoApprove, []string{"read_file"}) {
					t.Errorf("enabled %v call timeout %v autoApprove %v", c.Enabled, c.CallTimeout, c.AutoApprove)
				}
			}, nil},
		{"Cline disabled", `{"mcpServers": {"x": {"command": "/bin/cat", "disabled": true}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.Enabled {
					t.Error("disabled: true left the server enabled")
				}
			}, nil},
		{"Cline streamable HTTP", `{"mcpServers": {"x": {"type": "streamableHttp", "url": "https://mcp.example.test/mcp", "disabled": false}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.URL != "https://mcp.example.test/mcp" {
					t.Errorf("url %q", c.URL)
				}
			}, nil},
		{"older Cline transportType", `{"mcpServers": {"x": {"transportType": "stdio", "command": "/bin/cat"}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.Command != "/bin/cat" {
					t.Errorf("command %q", c.Command)
				}
			}, nil},
		{"Roo Code", `{"mcpServers": {"x": {"command": "/bin/cat", "alwaysAllow": ["a", "b"], "disabledTools": ["c"], "timeout": 30}}}`,
			func(t *testing.T, c ServerConfig) {
				if !slices.Equal(c.AutoApprove, []string{"a", "b"}) || !slices.Equal(c.DisabledTools, []string{"c"}) || c.CallTimeout != 30*time.Second {
					t.Errorf("autoApprove %v disabledTools %v timeout %v", c.AutoApprove, c.DisabledTools, c.CallTimeout)
				}
			}, nil},
		{"Windsurf", `{"mcpServers": {"x": {"serverUrl": "https://mcp.example.test/mcp"}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.URL != "https://mcp.example.test/mcp" || c.Command != "" {
					t.Errorf("url %q command %q", c.URL, c.Command)
				}
			}, nil},
		{"Gemini CLI", `{"mcpServers": {"x": {"httpUrl": "https://mcp.example.test/mcp"}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.URL != "https://mcp.example.test/mcp" {
					t.Errorf("url %q", c.URL)
				}
			}, nil},
		{"type streamable-http", `{"mcpServers": {"x": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.URL != "http://127.0.0.1:9/mcp" {
					t.Errorf("url %q", c.URL)
				}
			}, nil},
		{"VS Code mcp.json", `{"inputs": [], "servers": {"x": {"type": "stdio", "command": "/bin/cat", "envFile": "${workspaceFolder}/.env"}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.Command != "/bin/cat" {
					t.Errorf("command %q", c.Command)
				}
			}, []string{"envFile is not read"}},
		{"VS Code and GitHub settings", `{"editor.fontSize": 12, "mcp": {"servers": {"x": {"command": "/bin/cat"}}}}`,
			func(t *testing.T, c ServerConfig) {
				if c.Command != "/bin/cat" {
					t.Errorf("command %q", c.Command)
				}
			}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSettings([]byte(tt.data), "settings s.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name != "x" {
				t.Fatalf("servers %+v, want x", got)
			}
			tt.check(t, got[0])
			for _, w := range tt.warned {
				if !slices.ContainsFunc(got[0].Warnings, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("warnings %q lack %q", got[0].Warnings, w)
				}
			}
			if len(tt.warned) == 0 && len(got[0].Warnings) > 0 {
				t.Errorf("unexpected warnings %q", got[0].Warnings)
			}
		})
	}
}

// The three shapes in one file: their servers are read in file order, and a
// name in two of them is refused.
func TestSettingsShapesTogether(t *testing.T) {
	got, err := ParseSettings([]byte(`{
		"servers": {"b": {"command": "b"}},
		"mcpServers": {"a": {"command": "a"}},
		"mcp": {"servers": {"c": {"command": "c"}, "a": {"command": "again"}}}}`), "settings s.json")
	if err == nil || !strings.Contains(err.Error(), `server "a": the server is defined twice`) {
		t.Errorf("err = %v, want a refused twice", err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"b", "a", "c"}) {
		t.Errorf("servers %v, want [b a c]", names)
	}
}

// One rule for field names everywhere: case, '_' and '-' do not matter.
func TestFieldNamesIgnoreCaseUnderscoresAndDashes(t *testing.T) {
	for _, key := range []string{"toolPrefix", "toolprefix", "TOOLPREFIX", "tool_prefix", "tool-prefix", "Tool_Prefix"} {
		got, err := ParseSettings([]byte(`{"mcpServers": {"x": {"command": "c", "`+key+`": "gh_"}}}`), "o")
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if got[0].ToolPrefix != "gh_" {
			t.Errorf("%s: tool prefix %q", key, got[0].ToolPrefix)
		}
	}
	_, err := ParseSettings([]byte(`{"mcpServers": {"x": {"command": "c", "toolPrefix": "a", "tool_prefix": "b"}}}`), "o")
	if err == nil || !strings.Contains(err.Error(), `field toolPrefix is given twice (as "toolPrefix" and "tool_prefix")`) {
		t.Errorf("err = %v", err)
	}
}

func TestOtherClientsFieldConflicts(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"command": "c", "enabled": true, "disabled": true}`, "enabled and disabled contradict each other"},
		{`{"url": "https://a/mcp", "serverUrl": "https://b/mcp"}`, `field url is given twice (as "url" and "serverUrl")`},
		{`{"command": "c", "timeout": 10, "callTimeoutSeconds": 20}`, `field callTimeoutSeconds is given twice`},
		{`{"command": "c", "timeout": "60"}`, `timeout must be a number of seconds (got string)`},
		{`{"command": "c", "autoApprove": "all"}`, `autoApprove must be an array of strings (got string)`},
		{`{"command": "c", "disabeld": true}`, `unknown field "disabeld" (did you mean "disabled"?)`},
	}
	for _, tt := range tests {
		_, err := ParseEntry("x", []byte(tt.data), SourceSettings, "o")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.data, err, tt.want)
		}
	}
	// Consistent values of both are fine.
	c, err := ParseEntry("x", []byte(`{"command": "c", "enabled": false, "disabled": true}`), SourceSettings, "o")
	if err != nil || c.Enabled {
		t.Errorf("got %v, %v", c.Enabled, err)
	}
}

func TestUnsetVariables(t *testing.T) {
	s := func(v string) *string { return &v }
	c := ServerConfig{
		Env:     map[string]*string{"A": s("${env:GH_TOKEN}"), "B": s("x ${env:EMPTY} ${env:SET}"), "C": nil, "D": s("${env:GH_TOKEN}")},
		URL:     "https://x/${env:TEAM}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${env:API_KEY}", "X": "${env:}"},
	}
	host := map[string]string{"SET": "1", "EMPTY": ""}
	got := c.UnsetVariables(func(k string) (string, bool) { v, ok := host[k]; return v, ok })
	if want := []string{"API_KEY", "EMPTY", "GH_TOKEN", "TEAM"}; !slices.Equal(got, want) {
		t.Errorf("unset %v, want %v", got, want)
	}
}
