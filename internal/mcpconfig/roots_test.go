package mcpconfig

import (
	"strings"
	"testing"
)

// The directories a server is given in its args hold: the bot declares
// roots (the chat's workspace) by default only to a command whose args
// name no directory of its own. server-filesystem given /srv/notes was
// handed the workspace as its root, which replaced /srv/notes from its
// second call on, while check claimed it saw only the workspace.
func TestRootsDefaultKeepsTheArgsDirectories(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		roots bool
		warn  string // a part of the check warning; "" for none
	}{
		{"server-filesystem with a folder", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]}`,
			false, `its args name directories of its own (/srv/notes): the bot declares no roots to it, so it serves them in every chat`},
		{"a folder under the workspace", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspace}/notes"]}`,
			false, "(${workspace}/notes)"},
		{"a home folder, as --flag=value", `{"command": "my-server", "args": ["--root=~/notes"]}`, false, ""},
		{"a folder as a variable's default", `{"command": "my-server", "args": ["${NOTES:-${workspace}/notes}"]}`, false, ""},
		{"server-filesystem without a folder", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}`, true, ""},
		{"the workspace itself", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspace}"]}`, true, ""},
		{"a script is not a folder", `{"command": "node", "args": ["/opt/server/dist/index.js", "--port", "3"]}`, true, ""},
		{"a relative script", `{"command": "python3", "args": ["./server.py"]}`, true, ""},
		{"roots asked for", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"], "roots": true}`,
			true, "serves each chat's workspace instead of the directories in its args (/srv/notes)"},
		{"roots refused", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "roots": false}`, false,
			"has no directory in its args and the bot declares no roots to it"},
		{"a url", `{"url": "https://mcp.example.test/mcp"}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseEntry("fs", []byte(tt.entry), SourceSettings, "test")
			if err != nil {
				t.Fatal(err)
			}
			if c.Roots != tt.roots {
				t.Errorf("roots %v, want %v", c.Roots, tt.roots)
			}
			warnings := strings.Join(c.Warnings, "\n")
			switch {
			case tt.warn == "" && strings.Contains(warnings, "roots"):
				t.Errorf("unexpected warning %q", warnings)
			case tt.warn != "" && !strings.Contains(warnings, tt.warn):
				t.Errorf("warnings %q lack %q", warnings, tt.warn)
			}
			if strings.Contains(warnings, "sees only the chat's workspace") {
				t.Errorf("the warning claims what does not happen: %q", warnings)
			}
		})
	}
}
