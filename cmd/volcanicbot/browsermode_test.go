package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/preset"
)

func TestBrowserMode(t *testing.T) {
	yes, no := true, false
	profile := []string{filepath.Join("chats", "42", ".volcanic", "browser-profile")}
	for _, tt := range []struct {
		name       string
		p          preset.Playwright
		profiles   []string
		wantShared bool
		want       []string // in the reason
	}{
		{"unset, a new data directory", preset.Playwright{}, nil, true, []string{"the default", "PLAYWRIGHT_SHARED unset"}},
		{"unset, a chat keeps a profile", preset.Playwright{}, profile, false,
			[]string{"PLAYWRIGHT_SHARED is unset", "1 chat keeps a browser profile", "chats/42/.volcanic/browser-profile",
				"PLAYWRIGHT_SHARED=false", "~250 MiB", "set PLAYWRIGHT_SHARED=true"}},
		{"unset, two chats keep one", preset.Playwright{}, append(profile, "chats/7/.volcanic/browser-profile"), false,
			[]string{"2 chats keep browser profiles"}},
		{"false", preset.Playwright{Shared: &no}, nil, false, []string{"PLAYWRIGHT_SHARED=false"}},
		{"true, profiles left", preset.Playwright{Shared: &yes}, profile, true,
			[]string{"PLAYWRIGHT_SHARED=true", "1 chat keeps a browser profile", "not used"}},
		{"a CDP endpoint", preset.Playwright{CDPEndpoint: "ws://browser:3000"}, profile, true, []string{"PLAYWRIGHT_CDP_ENDPOINT"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shared, why := browserMode(tt.p, tt.profiles)
			if shared != tt.wantShared {
				t.Errorf("shared %v, want %v (%s)", shared, tt.wantShared, why)
			}
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("the reason %q lacks %q", why, w)
				}
			}
		})
	}
}

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
