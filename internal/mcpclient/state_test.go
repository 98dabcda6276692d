package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// stateHarness is a shared fake whose sessions keep a value as a browser
// context keeps a login, saved in the chat's private folder.
func stateHarness(t *testing.T) (*harness, *Session, func(tool, args string) Result) {
	t.Helper()
	cfg, _ := sharedServer(t, "shared")
	cfg.State = &mcpconfig.StateTools{Save: fakemcp.ToolSaveState, Restore: fakemcp.ToolRestoreState, File: "state.json"}
	h := newHarness(t, nil, cfg)
	alice := h.session("")
	return h, alice, func(tool, args string) Result {
		t.Helper()
		return h.call(alice, h.tool("shared", tool), args)
	}
}

func savedState(s *Session) string {
	b, _ := os.ReadFile(filepath.Join(s.private, "state.json"))
	return string(b)
}

// The browser dies, and the chat's connection stops before any call of the
// chat (a shutdown, /mcp restart): the save runs in the context the server
// opens for it, empty, and must not replace the chat's saved state. The
// next start restores what was saved.
func TestStateNotSavedFromAContextTheChatDidNotRestore(t *testing.T) {
	h, alice, call := stateHarness(t)
	call(fakemcp.ToolRemember, `{"value":"logged in"}`)
	testkit.WaitFor(t, "the state saved when the chat's calls paused", 10*time.Second, func() bool {
		return strings.Contains(savedState(alice), "logged in")
	})
	call(fakemcp.ToolDropContext, `{}`) // Chromium dies
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); !strings.Contains(got, `"logged in"`) {
		t.Errorf("the saved state after a crash and a stop: %q, want the login kept", got)
	}
	if !strings.Contains(h.logs.String(), "the save ran in a new, empty context") {
		t.Errorf("the log does not say why the state was not saved:\n%s", h.logs.String())
	}
	if got := call(fakemcp.ToolRecall, `{}`).Text(); got != "remembered: logged in" {
		t.Errorf("after the restart: %q, want the login restored", got)
	}
}

// After a crash the chat's next call runs in a new context and its state is
// restored into it: that context is the chat's, and is saved again.
func TestStateSavedFromTheContextItWasRestoredInto(t *testing.T) {
	_, alice, call := stateHarness(t)
	call(fakemcp.ToolRemember, `{"value":"logged in"}`)
	testkit.WaitFor(t, "the state saved", 10*time.Second, func() bool { return strings.Contains(savedState(alice), "logged in") })
	call(fakemcp.ToolDropContext, `{}`)
	res := call(fakemcp.ToolRecall, `{}`) // opens a new context: the state is restored after it
	if !strings.Contains(res.Text(), "the browser had stopped") {
		t.Errorf("the call after the crash: %q, want the model told", res.Text())
	}
	if got := call(fakemcp.ToolRecall, `{}`).Text(); got != "remembered: logged in" {
		t.Fatalf("after the crash: %q, want the state restored", got)
	}
	call(fakemcp.ToolRemember, `{"value":"logged in again"}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); !strings.Contains(got, "logged in again") {
		t.Errorf("the saved state: %q, want what the restored context holds now", got)
	}
}

// A chat with nothing saved: the context its calls open is its own, and is
// saved; a restore that fails leaves the chat's context unsaved, so that
// its saved state is not replaced by one it was never restored into.
func TestStateWithNothingSavedAndAFailedRestore(t *testing.T) {
	_, alice, call := stateHarness(t)
	call(fakemcp.ToolRemember, `{"value":"first"}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); !strings.Contains(got, `"first"`) {
		t.Fatalf("a chat that had nothing saved: %q, want its context saved", got)
	}

	// A state the server cannot restore (the fake's is a string).
	if err := os.WriteFile(filepath.Join(alice.private, "state.json"), []byte(`{"value":42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	call(fakemcp.ToolRemember, `{"value":"in an unrestored context"}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); got != `{"value":42}` {
		t.Errorf("the saved state after a failed restore: %q, want it kept", got)
	}
}

// A save the server cut short and still called a success (a full disk it
// did not notice): the file is refused, and the last good state stays —
// whole, and restored at the next start.
func TestStateCutShortKeepsTheLastGood(t *testing.T) {
	h, alice, call := stateHarness(t)
	call(fakemcp.ToolRemember, `{"value":"logged in"}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	good := savedState(alice)
	if !strings.Contains(good, "logged in") {
		t.Fatalf("saved %q", good)
	}
	call(fakemcp.ToolRemember, `{"value":"logged in again"}`)
	call(fakemcp.ToolCutNextSave, `{}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); got != good {
		t.Errorf("the saved state after a cut save: %q, want the last good %q", got, good)
	}
	if !strings.Contains(h.logs.String(), "state was not saved") {
		t.Errorf("the log does not say the state was not saved")
	}
	if got := call(fakemcp.ToolRecall, `{}`).Text(); got != "remembered: logged in" {
		t.Errorf("after the restart: %q, want the last good state restored", got)
	}
	if entries, _ := os.ReadDir(alice.Workspace()); len(entries) != 0 {
		t.Errorf("the workspace holds %v, want no copy of the state left", entries)
	}
}

// A saved state a version before this one left cut short (it rewrote the
// file in place) is not restored: it is kept aside as <file>.invalid, the
// chat starts with nothing saved, and its next save is kept.
func TestStateLeftCutShortIsSetAside(t *testing.T) {
	_, alice, call := stateHarness(t)
	path := filepath.Join(alice.private, "state.json")
	if err := os.WriteFile(path, []byte(`{"value":"logg`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := call(fakemcp.ToolRecall, `{}`).Text(); got != "remembered nothing" {
		t.Errorf("a chat whose saved state was cut short: %q, want nothing restored", got)
	}
	if b, err := os.ReadFile(path + ".invalid"); err != nil || string(b) != `{"value":"logg` {
		t.Errorf("the cut state set aside: %q (%v)", b, err)
	}
	call(fakemcp.ToolRemember, `{"value":"logged in anew"}`)
	if err := alice.Restart("shared"); err != nil {
		t.Fatal(err)
	}
	if got := savedState(alice); !strings.Contains(got, "logged in anew") {
		t.Errorf("the next save: %q", got)
	}
}
