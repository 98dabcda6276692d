package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PLAYWRIGHT_SHARED emptied after a run with false: the chats keep a
// browser each, and the start-up log and check say so and why (before,
// the log said nothing, and ~250 MiB a chat went on silently).
func TestBrowserModeIsLoggedWithItsReason(t *testing.T) {
	dataDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dataDir, "chats", "42", ".volcanic", "browser-profile"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The browser's command does not exist: nothing here needs it to start.
	browser := []string{"PLAYWRIGHT_ENABLED=true", "PLAYWRIGHT_SHARED=", "PLAYWRIGHT_COMMAND=" + filepath.Join(t.TempDir(), "no-playwright-mcp")}
	d := startDaemon(t, echoThenAnswer, daemonOptions{dataDir: dataDir, extra: browser})
	d.waitLog(`"msg":"browser mode","mode":"per chat","why":"PLAYWRIGHT_SHARED is unset and 1 chat keeps a browser profile of its own (chats/42/.volcanic/browser-profile)`)
	d.stop()

	var out, errOut bytes.Buffer
	env := append(baseEnviron(t, t.TempDir()), browser...)
	env = append(env, "VOLCANIC_DATA_DIR="+dataDir)
	run(context.Background(), []string{"check"}, &out, &errOut, env)
	if !strings.Contains(out.String(), "browser mode: per chat: PLAYWRIGHT_SHARED is unset and 1 chat keeps a browser profile") {
		t.Errorf("check does not say which browser mode and why:\n%s", out.String())
	}
	out.Reset()
	run(context.Background(), []string{"check"}, &out, &errOut, append(env[:len(env):len(env)], "PLAYWRIGHT_SHARED=true"))
	if !strings.Contains(out.String(), "browser mode: shared: PLAYWRIGHT_SHARED=true") {
		t.Errorf("check with PLAYWRIGHT_SHARED=true:\n%s", out.String())
	}
}
