package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// compose.yaml gives the bot a memory limit (without one the browser's
// ceiling came from the host's RAM: 184 browsing chats on a 24 GiB host),
// and what compose.yaml and docs/deployment.md say that limit allows is
// what the bot computes from it (its memory budget, the browser alone).
func TestComposeMemoryLimitAndItsCeiling(t *testing.T) {
	compose := readRepoFile(t, "compose.yaml")
	bot, _, _ := strings.Cut(compose, "\nvolumes:")
	m := regexp.MustCompile(`(?m)^    mem_limit: \$\{MEMORY_LIMIT:-(\d+)([gm])\}$`).FindStringSubmatch(bot)
	if m == nil {
		t.Fatal("compose.yaml's bot service has no mem_limit: ${MEMORY_LIMIT:-<n>g}")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	limit := n << 30
	if m[2] == "m" {
		limit = n << 20
	}
	browsing := browserCeiling(t, limit)
	if browsing < 4 {
		t.Errorf("mem_limit %s%s allows %d browsing chats at once: too few to ship", m[1], m[2], browsing)
	}
	for file, want := range map[string]string{
		"compose.yaml":       fmt.Sprintf("at most %d browsing chats at once in %s GiB", browsing, m[1]),
		"docs/deployment.md": fmt.Sprintf("at most %d browsing chats at once", browsing),
	} {
		if text := readRepoFile(t, file); !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
			t.Errorf("%s does not say %q (what the bot computes from compose.yaml's limit)", file, want)
		}
	}
}

// browserCeiling is the shared browser's ceiling the bot sizes from a
// memory limit of limit bytes (as read from its cgroup) with no other
// server: NewMain's own computation, the memory budget.
func browserCeiling(t *testing.T, limit int64) int {
	t.Helper()
	environ := append(baseEnviron(t, t.TempDir()), "PLAYWRIGHT_ENABLED=true", fmt.Sprintf("VOLCANIC_MEMORY_LIMIT_MIB=%d", limit>>20))
	m, err := NewMain(io.Discard, environ)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.preset.IsShared() || m.preset.MaxBrowsers == 0 {
		t.Fatalf("the browser: shared %v, at most %d browsing chats", m.preset.IsShared(), m.preset.MaxBrowsers)
	}
	return m.preset.MaxBrowsers
}

// readRepoFile reads a file of the repository by its path from the root.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
