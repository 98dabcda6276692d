package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// binaryBot is the bot built as its users run it (buildBinary), in a
// process of its own, for the tests that measure that process.
type binaryBot struct {
	cmd  *exec.Cmd
	logs *testkit.SyncBuffer
	data string // VOLCANIC_DATA_DIR
}

// startBinaryBot starts the binary against tg and the model at modelURL
// (OpenAI-compatible), alice allowed, JSON logs, env added to the rest,
// and waits for its first poll. At the test's end it is asked to stop
// (killed after 20 s), and its log is shown if the test failed.
func startBinaryBot(t *testing.T, tg *telegramtest.Fake, modelURL string, env ...string) *binaryBot {
	t.Helper()
	b := &binaryBot{cmd: exec.Command(buildBinary(t)), logs: &testkit.SyncBuffer{}, data: t.TempDir()}
	b.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(), fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", alice),
		"VOLCANIC_DATA_DIR=" + b.data, "VOLCANIC_AGENT_DIR=" + t.TempDir(), "LLM_PROVIDER=openai", "LLM_MODEL=test-model",
		"OPENAI_API_KEY=sk-e2e-openai-0123456789", "OPENAI_BASE_URL=" + modelURL, "LOG_FORMAT=json"}, env...)
	b.cmd.Stdout, b.cmd.Stderr = b.logs, b.logs
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = b.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("bot log:\n%.20000s", b.logs.String())
		}
	})
	if _, err := tg.WaitFor("getUpdates", 1, 30*time.Second); err != nil {
		t.Fatalf("the bot never polled: %v", err)
	}
	return b
}

// pid is the bot's process id.
func (b *binaryBot) pid() int { return b.cmd.Process.Pid }
