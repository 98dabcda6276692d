package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory of a version before the private folders: each chat's
// transcript and per-chat browser profile under <workspace>/.volcanic/.
// The first start moves them out of the workspace; the chat's
// conversation goes on, its browser keeps its login, and with
// PLAYWRIGHT_SHARED unset the profile found keeps the browser per chat.
func TestUpgradeMovesThePrivateStateOutOfTheWorkspace(t *testing.T) {
	env := browserEnv(t)
	login := loginSite(t)
	dataDir := t.TempDir()
	tg := newTelegram(t)
	const secret = "MIGRATED-MEMORY-3e8a"
	d := startDaemon(t, wallModel, daemonOptions{extra: append(env, "PLAYWRIGHT_SHARED=false"), dataDir: dataDir, tg: tg})
	d.ask(alice, "remember "+secret, "noted")
	d.ask(alice, "read "+login.URL+"/login?as=alice-upgrade", "The H1 is: ")
	d.stop() // the browser stops gracefully: its cookies are on disk

	// The layout of the versions before.
	private := filepath.Join(dataDir, "private", fmt.Sprint(alice))
	old := filepath.Join(dataDir, "chats", fmt.Sprint(alice), ".volcanic")
	if err := os.Rename(private, old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dataDir, "private")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(old, "browser-profile")); err != nil {
		t.Fatalf("no per-chat profile to migrate: %v", err)
	}

	d = startDaemon(t, wallModel, daemonOptions{extra: env, dataDir: dataDir, tg: tg}) // PLAYWRIGHT_SHARED unset
	d.waitLog("moved the chats' private state out of their workspaces")
	d.waitLog("volcanicbot starting")
	logs := d.logs.String()
	if !strings.Contains(logs, "MCP: playwright enabled") || strings.Contains(logs, "one browser shared by every chat") {
		t.Errorf("with a per-chat profile found the browser is not per chat:\n%s", logs)
	}
	if _, err := os.Lstat(old); err == nil {
		t.Errorf("%s is still in the workspace", old)
	}
	for _, name := range []string{"transcript.jsonl", "browser-profile"} {
		if _, err := os.Stat(filepath.Join(private, name)); err != nil {
			t.Errorf("%s not in the private folder: %v", name, err)
		}
	}

	if got := d.ask(alice, "read "+login.URL+"/whoami", "The H1 is: "); got != "The H1 is: Unique heading cookie=alice-upgrade storage=alice-upgrade" {
		t.Errorf("after the upgrade alice's browser says %q, want her login kept in the moved profile", got)
	}
	reqs := d.model.Requests()
	b, _ := json.Marshal(reqs[len(reqs)-1].JSON)
	if !strings.Contains(string(b), secret) {
		t.Errorf("after the upgrade the model no longer sees the conversation before it")
	}
}
