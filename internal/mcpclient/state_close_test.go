package mcpclient

import (
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// The model closed the chat's browser (the State's Close tool), its state
// saved just before: stopping the chat's server then saves nothing — no
// empty context opened only to be saved, no warning in the log (check and
// every chat whose model closed its browser logged "the chat's state was
// not saved") — and the next start restores what was saved before the
// close.
func TestStateAfterACloseIsTheOneSavedBeforeIt(t *testing.T) {
	cfg, _ := sharedServer(t, "shared")
	cfg.State = &mcpconfig.StateTools{Save: fakemcp.ToolSaveState, Restore: fakemcp.ToolRestoreState,
		Close: fakemcp.ToolDropContext, File: "state.json"}
	h := newHarness(t, nil, cfg)
	alice := h.session("")
	call := func(tool, args string) Result {
		t.Helper()
		return h.call(alice, h.tool("shared", tool), args)
	}
	call(fakemcp.ToolRemember, `{"value":"logged in"}`)
	call(fakemcp.ToolDropContext, `{}`) // browser_close: saved before it
	if got := savedState(alice); !strings.Contains(got, `"logged in"`) {
		t.Fatalf("the state saved before the close: %q", got)
	}
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if logs := h.logs.String(); strings.Contains(logs, "state was not saved") {
		t.Errorf("a stop after the close logged a failed save:\n%s", logs)
	}
	if got := savedState(alice); !strings.Contains(got, `"logged in"`) {
		t.Errorf("the saved state after the stop: %q, want the one saved before the close", got)
	}
	if got := call(fakemcp.ToolRecall, `{}`).Text(); got != "remembered: logged in" {
		t.Errorf("after the restart: %q, want the login restored", got)
	}
}
