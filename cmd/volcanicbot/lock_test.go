package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// A second `run` on the data directory of a running bot refuses to start,
// naming the bot that holds it, and touches none of its processes; `check`
// beside the running bot works and touches none of them either.
func TestSecondRunOnTheDataDirRefuses(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{modes: []string{fakemcp.ModeGrandchild}})
	d.tg.Message(alice, alice, "hi")
	d.waitText(alice, "the tool said: hi")
	owned := markedPIDs(ownerMark(d.dataDir))
	if len(owned) < 2 {
		t.Fatalf("marked processes %v, want the chat's server and its grandchild at least", owned)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"run"}, &stdout, &stderr, d.environ)
	host, _ := os.Hostname()
	want := "the data directory " + d.dataDir + " is in use by volcanicbot pid " + strconv.Itoa(os.Getpid()) + " on host " + host + " since "
	if code != 1 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "stop it first, or use another VOLCANIC_DATA_DIR") {
		t.Errorf("second run: exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr.String(), want)
	}
	if ctx.Err() != nil {
		t.Error("the second run ran until its context ended instead of refusing")
	}

	if code, out := checkInAnotherProcess(t, d.environ); code != 0 || !strings.Contains(out, "fake") {
		t.Errorf("check beside the bot: exit %d\n%s", code, out)
	}
	for _, pid := range owned {
		if !fakemcp.Alive(pid) {
			t.Errorf("process %d of the running bot was ended", pid)
		}
	}
	d.tg.Message(alice, alice, "still there")
	d.waitText(alice, "the tool said: still there")
	if strings.Contains(d.logs.String(), "ended processes left by an earlier run") {
		t.Error("the running bot's processes were taken for an earlier run's")
	}
}

// Once the bot stops, the data directory is free for the next.
func TestDataDirLockIsReleased(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var inUse *DataDirInUseError
	if _, err := lockDataDir(dir); !errors.As(err, &inUse) || inUse.PID != os.Getpid() || inUse.Since.IsZero() {
		t.Fatalf("second lock: %v (%+v)", err, inUse)
	}
	first.release()
	second, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	second.release()
}

// checkInAnotherProcess runs `check` with environ in a process of its own,
// as an operator would beside the running bot, and returns its exit code
// and output.
func checkInAnotherProcess(t *testing.T, environ []string) (int, string) {
	t.Helper()
	b, err := json.Marshal(environ)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCheck$")
	cmd.Env = append(os.Environ(), "VOLCANICBOT_TEST_CHECK="+string(b))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestHelperCheck is checkInAnotherProcess's process: `check` with the
// environment in VOLCANICBOT_TEST_CHECK (JSON), exiting with its code.
func TestHelperCheck(t *testing.T) {
	v := os.Getenv("VOLCANICBOT_TEST_CHECK")
	if v == "" {
		t.Skip("the helper of checkInAnotherProcess")
	}
	var environ []string
	if err := json.Unmarshal([]byte(v), &environ); err != nil {
		t.Fatal(err)
	}
	os.Exit(run(context.Background(), []string{"check"}, os.Stdout, os.Stderr, environ))
}
