package preset

import (
	"fmt"
	"path/filepath"

	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// How the browser runs: shared by the chats or one per chat (Mode), and
// how many at once (Sized).

// WithMode is p with its mode decided for the chats of the data directory
// dataDir (Shared set; see Mode), and why.
func (p Playwright) WithMode(dataDir string) (Playwright, string) {
	shared, why := p.Mode(ChatProfiles(dataDir))
	p.Shared = &shared
	return p, why
}

// Mode decides whether the chats share one browser (a context each)
// or have a server and a browser each, and says why in the operator's
// words, for the start-up log and check: emptying PLAYWRIGHT_SHARED after
// trying false keeps a browser per chat (~250 MiB a chat instead of ~45)
// while the profiles that made are there, and nothing said so. profiles
// are the browser profiles chats keep of their own (ChatProfiles).
func (p Playwright) Mode(profiles []string) (shared bool, why string) {
	switch {
	case p.CDPEndpoint != "":
		return true, "PLAYWRIGHT_CDP_ENDPOINT is one browser for every chat"
	case p.Shared != nil && *p.Shared:
		why = "PLAYWRIGHT_SHARED=true"
		if len(profiles) > 0 {
			why += fmt.Sprintf("; %s (%s), not used by the shared browser", keepProfiles(profiles), profiles[0])
		}
		return true, why
	case p.Shared != nil:
		return false, "PLAYWRIGHT_SHARED=false"
	case len(profiles) > 0:
		return false, fmt.Sprintf("PLAYWRIGHT_SHARED is unset and %s (%s), made with PLAYWRIGHT_SHARED=false "+
			"or by a version before the shared browser: a browser per chat keeps their logins, at ~250 MiB a browsing chat "+
			"instead of ~45; set PLAYWRIGHT_SHARED=true to share one browser (those chats then log in once more)",
			keepProfiles(profiles), profiles[0])
	}
	return true, "the default (PLAYWRIGHT_SHARED unset, and no chat keeps a browser profile of its own)"
}

func keepProfiles(profiles []string) string {
	if len(profiles) == 1 {
		return "1 chat keeps a browser profile of its own"
	}
	return fmt.Sprintf("%d chats keep browser profiles of their own", len(profiles))
}

// ModeName is the mode in the log: "shared" or "per chat".
func (p Playwright) ModeName() string {
	if p.IsShared() {
		return "shared"
	}
	return "per chat"
}

// ChatProfiles are the browser profiles chats keep of their own (the
// per-chat browser of an earlier version, or PLAYWRIGHT_SHARED=false), in
// their private folders or, not migrated yet, their workspaces' old
// .volcanic/, relative to the data directory: PLAYWRIGHT_SHARED unset then
// keeps the per-chat browsers, whose profiles hold the chats' logins,
// rather than start every chat logged out in the shared one (Mode).
func ChatProfiles(dataDir string) []string {
	matches := chatdir.New(dataDir).WithPrivate(ProfileDir)
	for i, m := range matches {
		if rel, err := filepath.Rel(dataDir, m); err == nil {
			matches[i] = rel
		}
	}
	return matches
}

// Sized is p with the ceiling its server got from the memory budget
// (mcpclient.SizeCeilings gives servers without one theirs) as
// MaxBrowsers, for the start-up line (StartupLine).
func (p Playwright) Sized(servers []mcpconfig.ServerConfig) Playwright {
	for _, s := range servers {
		if s.Name == PlaywrightServer && s.Source == mcpconfig.SourcePreset {
			p.MaxBrowsers = s.MaxLive
		}
	}
	return p
}
