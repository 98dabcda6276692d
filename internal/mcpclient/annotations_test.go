package mcpclient

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestToolAnnotations(t *testing.T) {
	tests := []struct {
		annotations string // tools/list's "annotations", "" for none
		readOnly    bool
		meaning     string
	}{
		{"", false, "The server says nothing about this tool, so: it may delete or overwrite data and talks to the outside world."},
		{`{"readOnlyHint":true}`, true, "It only reads and talks to the outside world."},
		{`{"readOnlyHint":true,"openWorldHint":false}`, true, "It only reads."},
		{`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}`, false, "It adds or changes data, deletes nothing."},
		{`{"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`, false, "It may delete or overwrite data and running it twice does no more than once."},
		{`{"title":"Navigate","openWorldHint":true}`, false, "It may delete or overwrite data and talks to the outside world."},
	}
	for _, tt := range tests {
		raw := `{"name":"t","inputSchema":{"type":"object"}`
		if tt.annotations != "" {
			raw += `,"annotations":` + tt.annotations
		}
		tools, _, err := decodeTools("s", []json.RawMessage{json.RawMessage(raw + "}")}, "")
		if err != nil {
			t.Fatal(err)
		}
		a := tools[0].Annotations
		if a.ReadOnly() != tt.readOnly || a.MeaningText() != tt.meaning {
			t.Errorf("%s: read-only %v, %q; want %v, %q", tt.annotations, a.ReadOnly(), a.MeaningText(), tt.readOnly, tt.meaning)
		}
	}
}

// /mcp <name> says which of the offered tools wait for approval: under
// "writes" every one but those that say they only read (echo) and those
// autoApprove lets run (sleep).
func TestServerStatusSaysWhatAsks(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	cfg.Approval, cfg.AutoApprove = mcpconfig.ApprovalWrites, []string{"sleep"}
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"one"}`)
	detail := detailOf(t, s, "fake")
	asks := detail.Asking
	if detail.Setup.Approval != "writes" || !slices.Equal(detail.Setup.AutoApprove, []string{"sleep"}) ||
		slices.Contains(asks, fakemcp.ToolEcho) || slices.Contains(asks, fakemcp.ToolSleep) || !slices.Contains(asks, fakemcp.ToolSlow) {
		t.Errorf("/mcp fake: %+v", detail)
	}
	cfg.Approval, cfg.AutoApprove = "", nil
	if got := serverSetup(cfg).Approval; got != string(mcpconfig.ApprovalNever) {
		t.Errorf("no approval rule is %q, want never", got)
	}
}
