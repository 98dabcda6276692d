package mcpclient

import (
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestFilterTools(t *testing.T) {
	names := []string{"browser_click", "browser_type", "browser_run_code_unsafe", "read_file", "write_file"}
	var tools []Tool
	for _, n := range names {
		tools = append(tools, Tool{MCPName: n})
	}
	tests := []struct {
		name         string
		cfg          mcpconfig.ServerConfig
		kept, hidden []string
		warnings     []string // each in one warning
	}{
		{"nothing", mcpconfig.ServerConfig{}, names, nil, nil},
		{"disabledTools: exact names", mcpconfig.ServerConfig{DisabledTools: []string{"read_file", "browser_*", "gone"}},
			[]string{"browser_click", "browser_type", "browser_run_code_unsafe", "write_file"}, []string{"read_file"},
			[]string{`disabledTools names "browser_*"`, `disabledTools names "gone"`}},
		{"includeTools", mcpconfig.ServerConfig{IncludeTools: []string{"browser_*", "nope_*"}},
			[]string{"browser_click", "browser_type", "browser_run_code_unsafe"}, []string{"read_file", "write_file"},
			[]string{`includeTools names "nope_*"`}},
		{"excludeTools wins", mcpconfig.ServerConfig{IncludeTools: []string{"browser_*"}, ExcludeTools: []string{"*_unsafe"}},
			[]string{"browser_click", "browser_type"}, []string{"browser_run_code_unsafe", "read_file", "write_file"}, nil},
		{"all three", mcpconfig.ServerConfig{DisabledTools: []string{"write_file"}, ExcludeTools: []string{"browser_t?pe"}},
			[]string{"browser_click", "browser_run_code_unsafe", "read_file"}, []string{"browser_type", "write_file"}, nil},
		{"everything hidden", mcpconfig.ServerConfig{ExcludeTools: []string{"*"}}, nil, names, []string{"hide every one of the server's 5 tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, hidden, warnings := filterTools(slices.Clone(tools), tt.cfg)
			var got []string
			for _, k := range kept {
				got = append(got, k.MCPName)
			}
			if !slices.Equal(got, tt.kept) || !slices.Equal(hidden, tt.hidden) {
				t.Errorf("kept %v, hidden %v; want %v, %v", got, hidden, tt.kept, tt.hidden)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %q", warnings, tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q, want %q", warnings[i], w)
				}
			}
		})
	}
}
