package main

import (
	"regexp"
	"strings"
	"testing"
)

// Coolify starts every service of its compose file and no profile (its
// deploy runs `docker compose up` without --profile), so the optional
// browser was never started there. compose.browser.yaml is the bot with its
// browser: the same bot service as compose.yaml (which has no profile),
// but for PLAYWRIGHT_CDP_ENDPOINT, which points at the browser service
// with the token both take from BROWSER_TOKEN.
func TestComposeBrowserFileIsTheBotWithItsBrowser(t *testing.T) {
	plain, withBrowser := readRepoFile(t, "compose.yaml"), readRepoFile(t, "compose.browser.yaml")
	for name, text := range map[string]string{"compose.yaml": plain, "compose.browser.yaml": withBrowser} {
		if strings.Contains(text, "profiles:") {
			t.Errorf("%s uses compose profiles, which Coolify never starts", name)
		}
	}
	if got := serviceNames(plain); strings.Join(got, ",") != "volcanicbot" {
		t.Errorf("compose.yaml's services: %v, want the bot alone", got)
	}
	if got := serviceNames(withBrowser); strings.Join(got, ",") != "volcanicbot,browser" {
		t.Errorf("compose.browser.yaml's services: %v, want the bot and its browser", got)
	}

	const endpoint = "      PLAYWRIGHT_CDP_ENDPOINT: ${PLAYWRIGHT_CDP_ENDPOINT:-ws://browser:3000?token=${BROWSER_TOKEN:-}}"
	a, b := serviceLines(plain, "volcanicbot"), serviceLines(withBrowser, "volcanicbot")
	if len(a) != len(b) {
		t.Fatalf("the bot's service: %d lines in compose.yaml, %d in compose.browser.yaml", len(a), len(b))
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		if !strings.HasPrefix(a[i], "      PLAYWRIGHT_CDP_ENDPOINT:") || b[i] != endpoint {
			t.Errorf("the bot's service differs:\ncompose.yaml:         %s\ncompose.browser.yaml: %s", a[i], b[i])
		}
	}
	if !strings.Contains(withBrowser, endpoint+"\n") {
		t.Errorf("compose.browser.yaml's bot does not default PLAYWRIGHT_CDP_ENDPOINT to the browser service:\nwant %s", endpoint)
	}
	browser := strings.Join(serviceLines(withBrowser, "browser"), "\n")
	for _, want := range []string{"image: ghcr.io/browserless/chromium:", "TOKEN: ${BROWSER_TOKEN:-}", "mem_limit:"} {
		if !strings.Contains(browser, want) {
			t.Errorf("compose.browser.yaml's browser service lacks %q", want)
		}
	}
	if strings.Contains(browser, "ports:") {
		t.Error("compose.browser.yaml publishes the browser's port: DevTools is full control of the browser")
	}
}

// The endpoint compose.browser.yaml gives the bot works with the token set,
// and is refused without one (BROWSER_TOKEN forgotten: the browser service
// would take anyone on its network).
func TestCDPEndpointNeedsItsToken(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		ok       bool
	}{
		{"ws://browser:3000?token=0123abcd", true},
		{"ws://browser:3000?token=", false},
		{"wss://chrome.browserless.io?token=&stealth", false},
		{"http://chromium:9222", true},
	} {
		cfg, err := LoadConfig(lookupIn([]string{"HOME=" + t.TempDir(), "PLAYWRIGHT_ENABLED=true", "PLAYWRIGHT_CDP_ENDPOINT=" + tt.endpoint}), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Validate(false)
		if ok := err == nil; ok != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.endpoint, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "BROWSER_TOKEN") {
			t.Errorf("%s: %v does not say what to set", tt.endpoint, err)
		}
	}
}

// serviceNames are the services of a compose file, in order.
func serviceNames(compose string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z0-9_-]*):$`).FindAllStringSubmatch(servicesSection(compose), -1) {
		out = append(out, m[1])
	}
	return out
}

// serviceLines are the lines of a service of a compose file, comments and
// blank lines left out.
func serviceLines(compose, service string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(servicesSection(compose), "\n") {
		switch {
		case line == "  "+service+":":
			in = true
			continue
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && !strings.HasPrefix(strings.TrimSpace(line), "#"):
			in = false
		}
		if in && strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			out = append(out, line)
		}
	}
	return out
}

// servicesSection is the services: block of a compose file.
func servicesSection(compose string) string {
	_, rest, _ := strings.Cut(compose, "\nservices:\n")
	section, _, _ := strings.Cut(rest, "\nvolumes:")
	return section
}
