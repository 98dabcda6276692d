package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// escaperModes make the fake leave its process tree at start: a
// double-forked daemon and a grandchild that calls setsid() on SIGTERM,
// both with a cleared environment (no owner mark).
var escaperModes = []string{fakemcp.ModeDaemon, fakemcp.ModeSetsidOnSIGTERM, fakemcp.ModeClearEnv}

// keptServer is a second server whose escapers keep their environment
// (and so the mark), with a log of its own.
func keptServer(t *testing.T) (map[string]any, string) {
	log := filepath.Join(t.TempDir(), "kept.log")
	l := fakemcp.Command(fakemcp.ModeDaemon, fakemcp.ModeSetsidOnSIGTERM).WithLog(log)
	return map[string]any{"kept": map[string]any{"command": l.Command, "env": l.Env, "toolPrefix": "kept_",
		"startupTimeoutSeconds": 10}}, log
}

// escaperPIDs waits until each log names n starts' escapers (a daemon and a
// grandchild each) and returns them all.
func escaperPIDs(t *testing.T, n int, logs ...string) []int {
	t.Helper()
	var pids []int
	for _, log := range logs {
		fakemcp.WaitForEvents(t, log, fakemcp.EventDaemon, n, 20*time.Second)
		fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, n, 20*time.Second)
		pids = append(pids, fakemcp.Escapers(fakemcp.ReadLog(t, log))...)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pids
}

// The descendants of a server that leave its tree end with it: after the
// discovery at start, /mcp restart, /new and the bot's shutdown — in the
// mode this machine gives the bot, and in the subreaper mode.
func TestE2EEscapersEndWithTheirServer(t *testing.T) {
	for _, mode := range []mcpclient.TrackMode{mcpclient.TrackAuto, mcpclient.TrackSubreaper} {
		t.Run(mode.String(), func(t *testing.T) {
			kept, keptLog := keptServer(t)
			d := startDaemon(t, echoThenAnswer, daemonOptions{modes: escaperModes, servers: kept,
				main: func(m *Main) { m.Tracking = mode }})
			d.waitLog("MCP catalogue ready")
			fakemcp.WaitDead(t, 10*time.Second, escaperPIDs(t, 1, d.mcpLog, keptLog)...)

			d.tg.Message(alice, alice, "hi")
			d.waitText(alice, "the tool said: hi")
			pids := escaperPIDs(t, 2, d.mcpLog)
			d.tg.Message(alice, alice, "/mcp restart fake")
			d.waitText(alice, "restarted")
			fakemcp.WaitDead(t, 10*time.Second, pids...)

			d.tg.Message(alice, alice, "again")
			d.waitText(alice, "the tool said: again")
			pids = escaperPIDs(t, 3, d.mcpLog)
			d.tg.Message(alice, alice, "/new")
			d.waitText(alice, "New conversation")
			fakemcp.WaitDead(t, 10*time.Second, pids...)

			d.tg.Message(alice, alice, "once more")
			d.waitText(alice, "the tool said: once more")
			pids = escaperPIDs(t, 4, d.mcpLog)
			d.stop()
			fakemcp.WaitDead(t, 10*time.Second, pids...)
		})
	}
}

// `check` discovers every server and leaves none of their descendants
// behind.
func TestCheckLeavesNoEscaper(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(escaperModes...).WithLog(log)
	kept, keptLog := keptServer(t)
	kept["fake"] = map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 10}
	b, _ := json.Marshal(map[string]any{"mcpServers": kept})
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir)); code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	fakemcp.WaitDead(t, 10*time.Second, escaperPIDs(t, 1, log, keptLog)...)
}

// The real binary killed with SIGKILL leaves its servers' escapers behind,
// those without the mark too; the next start ends them.
func TestEscapersOfAKilledBotAreReapedAtStart(t *testing.T) {
	binary := buildBinary(t)
	tg := telegramtest.New(t)
	model := llmtest.NewOpenAI(t)
	for range 20 {
		model.Push(llmtest.Func(echoThenAnswer))
	}
	dataDir, agentDir := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(append(escaperModes, fakemcp.ModeGrandchild)...).WithLog(log)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 10}}})
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", alice),
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + agentDir,
		"LLM_PROVIDER=openai", "LLM_MODEL=test", "OPENAI_API_KEY=sk-x-0123456789", "OPENAI_BASE_URL=" + model.URL,
		"LOG_FORMAT=json", "LOG_LEVEL=debug",
	}
	start := func() (*exec.Cmd, *testkit.SyncBuffer) {
		cmd := exec.Command(binary, "run")
		cmd.Env = environ
		logs := &testkit.SyncBuffer{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("bot log:\n%s", logs.String())
			}
		})
		return cmd, logs
	}
	first, logs := start()
	testkit.WaitFor(t, "the discovery", 20*time.Second, func() bool { return strings.Contains(logs.String(), "MCP catalogue ready") })
	fakemcp.WaitForEvents(t, log, fakemcp.EventDaemon, 1, 10*time.Second)
	fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 2, 10*time.Second)
	fakemcp.WaitDead(t, 10*time.Second, fakemcp.Escapers(fakemcp.ReadLog(t, log))...) // the discovery's
	tg.Message(alice, alice, "hi")
	testkit.WaitFor(t, "the answer", 20*time.Second, func() bool { return containsText(tg.Texts(alice), "the tool said: hi") })
	// The chat's server: a daemon, a grandchild that would setsid on
	// SIGTERM, and one that stays in its group, none with the mark.
	fakemcp.WaitForEvents(t, log, fakemcp.EventDaemon, 2, 10*time.Second)
	fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 4, 10*time.Second)
	var survivors []int
	for _, pid := range fakemcp.Escapers(fakemcp.ReadLog(t, log)) {
		if fakemcp.Alive(pid) {
			survivors = append(survivors, pid)
		}
	}
	if len(survivors) != 3 {
		t.Fatalf("escapers alive %v, want the chat server's 3", survivors)
	}
	t.Cleanup(func() {
		for _, pid := range survivors {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	for _, pid := range survivors {
		if !fakemcp.Alive(pid) {
			t.Fatalf("escaper %d did not survive the SIGKILL: nothing to test", pid)
		}
	}
	second, logs := start()
	fakemcp.WaitDead(t, 15*time.Second, survivors...)
	testkit.WaitFor(t, "the second run to say it ended them", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "ended processes left by an earlier run")
	})
	_ = second.Process.Signal(syscall.SIGTERM)
	_ = second.Wait()
}
