package preset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestBrowserMode(t *testing.T) {
	yes, no := true, false
	profile := []string{filepath.Join("chats", "42", ".volcanic", "browser-profile")}
	for _, tt := range []struct {
		name       string
		p          Playwright
		profiles   []string
		wantShared bool
		want       []string // in the reason
	}{
		{"unset, a new data directory", Playwright{}, nil, true, []string{"the default", "PLAYWRIGHT_SHARED unset"}},
		{"unset, a chat keeps a profile", Playwright{}, profile, false,
			[]string{"PLAYWRIGHT_SHARED is unset", "1 chat keeps a browser profile", "chats/42/.volcanic/browser-profile",
				"PLAYWRIGHT_SHARED=false", "~250 MiB", "set PLAYWRIGHT_SHARED=true"}},
		{"unset, two chats keep one", Playwright{}, append(profile, "chats/7/.volcanic/browser-profile"), false,
			[]string{"2 chats keep browser profiles"}},
		{"false", Playwright{Shared: &no}, nil, false, []string{"PLAYWRIGHT_SHARED=false"}},
		{"true, profiles left", Playwright{Shared: &yes}, profile, true,
			[]string{"PLAYWRIGHT_SHARED=true", "1 chat keeps a browser profile", "not used"}},
		{"a CDP endpoint", Playwright{CDPEndpoint: "ws://browser:3000"}, profile, true, []string{"PLAYWRIGHT_CDP_ENDPOINT"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shared, why := tt.p.Mode(tt.profiles)
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

// The profiles are found in the chats' private folders and, in a data
// directory not migrated yet, in their workspaces' old .volcanic/, and
// decide the mode when PLAYWRIGHT_SHARED is unset.
func TestWithMode(t *testing.T) {
	dataDir := t.TempDir()
	if p, why := (Playwright{}).WithMode(dataDir); !p.IsShared() || !strings.Contains(why, "the default") {
		t.Errorf("a new data directory: shared %v (%s)", p.IsShared(), why)
	}
	for _, dir := range []string{filepath.Join("private", "42", ProfileDir), filepath.Join("chats", "7", ".volcanic", ProfileDir)} {
		if err := os.MkdirAll(filepath.Join(dataDir, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := ChatProfiles(dataDir)
	want := []string{filepath.Join("private", "42", ProfileDir), filepath.Join("chats", "7", ".volcanic", ProfileDir)}
	if !slices.Equal(got, want) {
		t.Errorf("ChatProfiles = %q, want %q", got, want)
	}
	p, why := (Playwright{}).WithMode(dataDir)
	if p.IsShared() || p.Shared == nil || !strings.Contains(why, "2 chats keep browser profiles of their own (private/42/browser-profile)") {
		t.Errorf("chats with profiles: shared %v (%s)", p.IsShared(), why)
	}
}

// The preset's ceiling from the memory budget is its MaxBrowsers; a
// user's server of the same name is not the preset.
func TestSized(t *testing.T) {
	servers := []mcpconfig.ServerConfig{
		{Name: "other", MaxLive: 9},
		{Name: PlaywrightServer, Source: mcpconfig.SourcePreset, MaxLive: 7},
	}
	if got := (Playwright{MaxBrowsers: 3}).Sized(servers).MaxBrowsers; got != 7 {
		t.Errorf("MaxBrowsers = %d, want 7", got)
	}
	if got := (Playwright{MaxBrowsers: 3}).Sized(servers[:1]).MaxBrowsers; got != 3 {
		t.Errorf("without the preset's server: MaxBrowsers = %d, want 3 (as it was)", got)
	}
}
