package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rollback to a version from before the private folders writes the
// chat's conversation into <workspace>/.volcanic/ again. Rolled forward,
// the bot goes on with the conversation in the private folder, takes
// nothing from the workspace, and warns at each start where the
// rollback's state lies, which the chat's tools can read.
func TestRollForwardWarnsOfTheRollbacksState(t *testing.T) {
	dataDir := t.TempDir()
	tg := newTelegram(t)
	const secret = "KEPT-MEMORY-71c2"
	d := startDaemon(t, wallModel, daemonOptions{dataDir: dataDir, tg: tg})
	d.ask(alice, "remember "+secret, "noted")
	d.stop()

	// What the old version leaves in the workspace.
	old := filepath.Join(dataDir, "chats", fmt.Sprint(alice), ".volcanic")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	const rollback = `{"role":"user","content":"ROLLBACK-ONLY-9d0e"}` + "\n"
	if err := os.WriteFile(filepath.Join(old, "transcript.jsonl"), []byte(rollback), 0o600); err != nil {
		t.Fatal(err)
	}

	d = startDaemon(t, wallModel, daemonOptions{dataDir: dataDir, tg: tg})
	d.waitLog("a workspace holds a conversation or browser logins in .volcanic/")
	if !strings.Contains(d.logs.String(), old) {
		t.Errorf("the warning does not name %s:\n%s", old, d.logs.String())
	}
	d.ask(alice, "remember more", "noted")
	reqs := d.model.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].JSON)
	if !strings.Contains(string(b), secret) || strings.Contains(string(b), "ROLLBACK-ONLY") {
		t.Errorf("after the roll-forward the model's request: want the conversation from before the rollback, "+
			"nothing from the workspace:\n%.2000s", b)
	}
	if got, _ := os.ReadFile(filepath.Join(old, "transcript.jsonl")); string(got) != rollback {
		t.Errorf("the rollback's transcript was changed: %q", got)
	}
}
