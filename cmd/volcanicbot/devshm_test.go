package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The docs say the browser needs no /dev/shm, so compose.yaml sets no
// shm_size (it advised 1 GB against crashes that Docker's 64 MB would
// cause): Playwright starts Chromium with --disable-dev-shm-usage, which
// puts its shared memory in /tmp. This holds the docs to it, with the
// preset's real launch, shared and per chat.
func TestBrowserDoesNotUseDevShm(t *testing.T) {
	for _, shared := range []string{"true", "false"} {
		t.Run("PLAYWRIGHT_SHARED="+shared, func(t *testing.T) {
			srv := site(t)
			d := startDaemon(t, browse, daemonOptions{extra: append(browserEnv(t), "PLAYWRIGHT_SHARED="+shared)})
			d.tg.Message(alice, alice, "read "+srv.URL+"/alpha")
			d.waitText(alice, "The H1 is: Unique heading alpha 7d3f")
			pids := browserPIDs(d)
			if len(pids) == 0 {
				t.Fatal("no browser process")
			}
			for _, pid := range pids {
				cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(cmd), "\x00--disable-dev-shm-usage\x00") {
					t.Errorf("Chromium %d runs without --disable-dev-shm-usage: it uses /dev/shm, and the docs' sizing is wrong:\n%s",
						pid, strings.ReplaceAll(string(cmd), "\x00", " "))
				}
			}
		})
	}
	if bot, _, _ := strings.Cut(readRepoFile(t, "compose.yaml"), "\nvolumes:"); strings.Contains(bot, "shm_size") {
		t.Error("compose.yaml gives the bot a shm_size, which its browser does not use")
	}
}
