package mcpconfig

import (
	"strings"
	"testing"
)

func TestApprovalFor(t *testing.T) {
	tests := []struct {
		entry    string
		tool     string // MCP name; exposed as "gh_" + tool
		readOnly bool
		want     Rule
	}{
		{`{"command":"x"}`, "delete_repo", false, RunFreely},
		{`{"command":"x","approval":"never"}`, "delete_repo", false, RunFreely},
		{`{"command":"x","approval":"writes"}`, "delete_repo", false, AskFirst},
		{`{"command":"x","approval":"writes"}`, "get_repo", true, RunFreely},
		{`{"command":"x","approval":"Always"}`, "get_repo", true, AskFirst},
		{`{"command":"x","approval":"always","autoApprove":["get_*"]}`, "get_repo", true, RunFreely},
		{`{"command":"x","approval":"always","autoApprove":["gh_get_repo"]}`, "get_repo", true, RunFreely},
		{`{"command":"x","approval":"writes","alwaysAllow":["create_*"]}`, "create_issue", false, RunFreely},
		{`{"command":"x","autoApprove":["*"],"alwaysAsk":["delete_*"]}`, "delete_repo", false, AskEveryTime},
		{`{"command":"x","alwaysAsk":["get_repo"]}`, "get_repo", true, AskEveryTime},
	}
	for _, tt := range tests {
		c, err := ParseEntry("gh", []byte(tt.entry), SourceSettings, "settings x")
		if err != nil {
			t.Fatalf("%s: %v", tt.entry, err)
		}
		c.ToolPrefix = "gh_"
		if got := c.ApprovalFor(tt.tool, "gh_"+tt.tool, tt.readOnly); got != tt.want {
			t.Errorf("%s: %s (read-only %v) = %v, want %v", tt.entry, tt.tool, tt.readOnly, got, tt.want)
		}
	}
}

func TestApprovalFieldsRefused(t *testing.T) {
	tests := []struct{ entry, want string }{
		{`{"command":"x","approval":"sometimes"}`, `approval must be never, writes or always (got "sometimes")`},
		{`{"command":"x","approval":true}`, `approval must be a string (got bool)`},
		{`{"command":"x","autoApprove":["[a-"]}`, `autoApprove has an invalid tool pattern "[a-"`},
		{`{"command":"x","alwaysAsk":[""]}`, `alwaysAsk has an invalid tool pattern ""`},
		{`{"command":"x","autoApprove":["a"],"alwaysAllow":["b"]}`, `field autoApprove is given twice (as "autoApprove" and "alwaysAllow")`},
	}
	for _, tt := range tests {
		_, err := ParseEntry("gh", []byte(tt.entry), SourceSettings, "settings x")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.entry, err, tt.want)
		}
	}
}
