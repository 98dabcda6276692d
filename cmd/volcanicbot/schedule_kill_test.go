package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The real binary, SIGKILLed after a scheduled run answered and before
// its answer reached the chat (Telegram refused it with 500s): after the
// restart the answer arrives once, and the task does not run again.
func TestE2EScheduledSIGKILLBetweenRunAndDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	binary := buildBinary(t)
	tg := newTelegram(t)
	model := llmtest.NewOpenAI(t)
	sched := &scheduler{answer: "Answer from before the kill"}
	for range 20 {
		model.Push(llmtest.Func(sched.reply))
	}
	agentDir, dataDir := t.TempDir(), t.TempDir()
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{}})
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	environ := append([]string{
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", alice),
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + agentDir,
		"LLM_PROVIDER=openai", "LLM_MODEL=test", "OPENAI_API_KEY=sk-e2e-openai-0123456789", "OPENAI_BASE_URL=" + model.URL,
		"LOG_FORMAT=json", "LOG_LEVEL=debug",
	}, scheduleEnv...)
	start := func(logs *testkit.SyncBuffer) *exec.Cmd {
		cmd := exec.Command(binary, "run")
		cmd.Env, cmd.Stderr = environ, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("log of a run:\n%s", logs.String())
			}
		})
		return cmd
	}
	firstLogs := &testkit.SyncBuffer{}
	first := start(firstLogs)
	tg.Message(alice, alice, `schedule {"task":"answer later","in":"2s"}`)
	waitChatText(t, tg, alice, "tool: scheduled j1")
	for range 5 { // every try of the sender's first attempt at the answer
		tg.FailNext("sendMessage", http.StatusInternalServerError, "Internal Server Error", 0)
	}
	testkit.WaitFor(t, "a failed delivery", 60*time.Second, func() bool {
		return strings.Contains(firstLogs.String(), `"msg":"delivery failed; retrying"`)
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	start(&testkit.SyncBuffer{})
	waitChatText(t, tg, alice, "Answer from before the kill")
	if n := count(tg.Sent(alice), 0, "Answer from before the kill"); n != 1 || sched.runCount() != 1 {
		t.Errorf("after the kill: %d deliveries, %d runs; want one of each", n, sched.runCount())
	}
}

// waitChatText waits for a message of chat that holds substr.
func waitChatText(t *testing.T, tg *telegramtest.Fake, chat int64, substr string) {
	t.Helper()
	if err := tg.WaitUntil(func() bool {
		for _, s := range tg.Texts(chat) {
			if strings.Contains(s, substr) {
				return true
			}
		}
		return false
	}, 60*time.Second); err != nil {
		t.Fatalf("chat %d never got %q; got %q", chat, substr, tg.Texts(chat))
	}
}
