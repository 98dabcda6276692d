package preset

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

func TestClearStaleProfileLock(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		lock  string // the SingletonLock target; "" for none
		clear bool
	}{
		{"another host (a redeployed container)", "3f2a9c1d7b4e-17", true},
		{"another host with dashes", "volcanicbot-7d9f8c-b2x4q-42", true},
		{"this host, the browser gone", host + "-" + strconv.Itoa(1<<22-1), true},
		{"this host, a live browser", host + "-" + strconv.Itoa(os.Getpid()), false},
		{"no lock", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "browser-profile")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.lock != "" {
				for name, target := range map[string]string{"SingletonLock": tt.lock,
					"SingletonSocket": "/tmp/org.chromium.Chromium.x/SingletonSocket", "SingletonCookie": "123"} {
					if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
						t.Fatal(err)
					}
				}
			}
			sp := mcpconfig.Spawn{Args: []string{"--headless", "--user-data-dir", "/elsewhere", "--user-data-dir=" + dir}}
			if err := clearStaleProfileLock(sp); err != nil {
				t.Fatal(err)
			}
			for _, name := range singletonFiles {
				_, err := os.Lstat(filepath.Join(dir, name))
				if exists := err == nil; exists != (tt.lock != "" && !tt.clear) {
					t.Errorf("%s exists: %v", name, exists)
				}
			}
		})
	}
	// Without a profile (--isolated) there is nothing to do.
	if err := clearStaleProfileLock(mcpconfig.Spawn{Args: []string{"--isolated"}}); err != nil {
		t.Error(err)
	}
}
