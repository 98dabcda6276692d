package testkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Tools the integration tests run, installed by `make test`: the pinned npm
// packages of tools/npm (VOLCANIC_TEST_NPM_BIN names their .bin folder
// elsewhere) and Debian's Chromium (VOLCANIC_TEST_CHROMIUM). Outside CI a
// missing one skips the test; in CI it fails it.

// NPMBin is the path of a pinned npm package's binary.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	return need(t, filepath.Join(npmBinDir(), name), "npm ci in tools/npm")
}

// NPMPackage is the folder of a pinned npm package (or one it depends on).
func NPMPackage(t testing.TB, name string) string {
	t.Helper()
	return need(t, filepath.Join(npmBinDir(), "..", name), "npm ci in tools/npm")
}

// Chromium is the path of the browser the real-browser tests drive.
func Chromium(t testing.TB) string {
	t.Helper()
	p := os.Getenv("VOLCANIC_TEST_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	return need(t, p, "apt-get install chromium")
}

func npmBinDir() string {
	if dir := os.Getenv("VOLCANIC_TEST_NPM_BIN"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tools", "npm", "node_modules", ".bin")
}

func need(t testing.TB, path, install string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (%v): `make test` installs it (%s)", path, err, install)
		}
		t.Skipf("%s is missing: run `make test` (%s)", path, install)
	}
	return path
}
