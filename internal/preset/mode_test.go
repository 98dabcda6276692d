package preset

import (
	"path/filepath"
	"strings"
	"testing"
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
