package preset

import (
	"testing"
)

// The browser's own files, for the chat's disk budget: everything in
// .playwright-mcp/ (both modes write there), and in browser/ only what the
// per-chat browser of earlier versions named itself, not the screenshots
// the model named.
func TestBrowserOutput(t *testing.T) {
	for _, shared := range []bool{true, false} {
		cfg := Playwright{Enabled: ptr(true), Shared: ptr(shared)}.Server()
		if len(cfg.Output) != 2 || cfg.Output[0].Dir != OutputFolder || cfg.Output[0].Match != nil || cfg.Output[1].Dir != "browser" {
			t.Fatalf("shared=%v: Output = %+v", shared, cfg.Output)
		}
	}
	legacy := Playwright{Enabled: ptr(true)}.Server().Output[1].Match
	for name, want := range map[string]bool{
		"page-2026-03-01T12-00-00-000Z.yml":     true,
		"console-2026-03-01T12-00-00-123Z.log":  true,
		"network-2026-12-31T23-59-59-999Z.log":  true,
		"page-2026-03-01T12-00-00-000Z.png":     true,
		"shot.png":                              false,
		"page.png":                              false,
		"page-1.yml":                            false,
		"my-page-2026-03-01.png":                false,
		"page-2026-03-01T12-00-00-000Z.yml.bak": false,
	} {
		if got := legacy(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
