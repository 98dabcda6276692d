package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The daemon at work beyond one conversation: Telegram's flood limits,
// shutdown, the webhook, servers at a URL or hung, metrics, a SIGKILL and
// the restart after it, prewarming. The harness (startDaemon, the fakes)
// is in e2e_test.go.

func TestE2ETelegram429IsRetried(t *testing.T) {
	d := startDaemon(t, func(llmtest.Request) llmtest.Reply { return llmtest.Text("after the flood") }, daemonOptions{})
	d.tg.FailNext("sendMessage", 429, "", 1)
	d.tg.Message(alice, alice, "hi")
	d.waitText(alice, "after the flood")
	var got429 bool
	for _, r := range d.tg.RequestsFor("sendMessage") {
		if r.Status == 429 {
			got429 = true
		}
	}
	if !got429 {
		t.Error("the fake never answered 429")
	}
}

// With Telegram's flood limits on both sides — the fake answers 429 to a
// call that breaks them — a turn's progress message, its edits, a photo,
// the answer and commands reach the chat without a single 429: the bot
// paces every call of the chat.
func TestE2EPacedUnderTelegramsLimits(t *testing.T) {
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		res, ok := toolResultText(req)
		switch {
		case !ok:
			return call("image", `{}`)
		case !strings.Contains(res, "echoed"):
			return call("echo", `{"text":"echoed"}`)
		}
		return llmtest.Text("done: " + res)
	}, daemonOptions{paced: true})
	start := time.Now()
	d.tg.Message(alice, alice, "go")
	d.tg.Message(alice, alice, "/mcp")
	d.tg.Message(alice, alice, "/help")
	d.waitText(alice, "done: echoed")
	d.waitText(alice, "Commands:")
	if n := d.tg.TooMany(alice); n != 0 {
		t.Errorf("%d calls answered 429", n)
	}
	sent := d.tg.Sent(alice)
	var at []time.Time
	for _, r := range d.tg.Requests() {
		if r.Status == 200 && r.ChatID() == alice && (r.Method == "sendMessage" || r.Method == "sendPhoto" || r.Method == "editMessageText") {
			at = append(at, r.Time)
		}
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 990*time.Millisecond {
			t.Errorf("calls %d and %d in the chat %v apart", i-1, i, gap)
		}
	}
	t.Logf("%d messages (%d calls) in %v", len(sent), len(at), time.Since(start).Round(time.Millisecond))
}

func TestE2EShutdownEndsEveryProcess(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{})
	d.tg.Message(alice, alice, "hi")
	d.waitText(alice, "the tool said: hi")
	starts := fakemcp.Filter(fakemcp.ReadLog(t, d.mcpLog), fakemcp.EventStart)
	start := time.Now()
	d.stop()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	for _, s := range starts {
		if fakemcp.Alive(s.PID) {
			t.Errorf("MCP process %d survived the shutdown", s.PID)
		}
	}
}

// With TELEGRAM_WEBHOOK_URL the daemon takes Telegram's posts on HTTP_ADDR
// instead of polling: a message gets its answer the same way, /healthz
// reports the webhook, and nothing polls.
func TestE2EWebhook(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{webhook: true})
	set := d.tg.RequestsFor("setWebhook")
	hook := set[0].Params["url"]
	if !strings.HasSuffix(hook, "/telegram/hook") || set[0].Params["secret_token"] != "e2e-webhook-secret_0123456789" {
		t.Fatalf("setWebhook %+v", set[0].Params)
	}
	d.tg.Message(alice, alice, "hello volcano")
	d.waitText(alice, "the tool said: hello volcano")
	resp, err := http.Get(strings.TrimSuffix(hook, "/telegram/hook") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "webhook registered") {
		t.Errorf("/healthz: %d %s", resp.StatusCode, body)
	}
	if n := len(d.tg.RequestsFor("getUpdates")); n != 0 {
		t.Errorf("%d getUpdates calls in webhook mode", n)
	}
	if strings.Contains(d.logs.String(), "e2e-webhook-secret_0123456789") {
		t.Error("the webhook secret is in the log")
	}
}

// A server at a URL, configured in settings.json like a user would: the
// daemon discovers it and a chat calls its tool over streamable HTTP with
// the header from the environment.
func TestE2EServerAtAURL(t *testing.T) {
	var auth atomic.Value
	h := fakemcp.HTTPHandler("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("the remote tool said: " + res)
		}
		return call("remote_echo", `{"text":"far away"}`)
	}, daemonOptions{
		servers: map[string]any{"remote": map[string]any{"url": srv.URL + "/mcp", "toolPrefix": "remote_",
			"headers": map[string]string{"Authorization": "Bearer ${env:REMOTE_MCP_TOKEN}"}}},
		extra: []string{"REMOTE_MCP_TOKEN=e2e-remote-token-0123456789"},
	})
	d.tg.Message(alice, alice, "call the remote one")
	d.waitText(alice, "the remote tool said: far away")
	if got, _ := auth.Load().(string); got != "Bearer e2e-remote-token-0123456789" {
		t.Errorf("Authorization %q", got)
	}
	d.tg.Message(alice, alice, "/mcp remote")
	d.waitText(alice, "url: "+srv.URL+"/mcp")
	if strings.Contains(strings.Join(d.texts(alice), "\n"), "e2e-remote-token") {
		t.Error("the token reached the chat")
	}
}

// A server whose command never answers (/bin/sleep) stalls nothing but the
// turns that come before its first discovery gave up: /mcp answers at once
// while that discovery runs, a /stop sent after /mcp is not held up behind
// it, and after it the chats answer at once.
func TestE2EHungServerStallsNoChat(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{servers: map[string]any{
		"hung": map[string]any{"command": "/bin/sleep", "args": []string{"1000"}, "startupTimeoutSeconds": 10},
	}})
	start := time.Now()
	d.tg.Message(alice, alice, "/mcp")
	d.tg.Message(alice, alice, "/stop")
	d.waitText(alice, "Nothing is running.")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("/mcp and /stop answered after %v, during the hung server's discovery", took)
	}
	d.waitText(alice, "hung: starting (listing its tools)")

	d.waitLog("MCP catalogue ready") // the hung server's first discovery gave up after 10 s
	for i, chat := range []int64{alice, bob} {
		start := time.Now()
		d.tg.Message(chat, chat, fmt.Sprintf("hi %d", i))
		d.waitText(chat, fmt.Sprintf("the tool said: hi %d", i))
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("chat %d waited %v for an answer", chat, took)
		}
	}
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "hung: failed: hung: no answer within the startup timeout of 10s")
}

// GET /metrics on METRICS_ADDR: the MCP servers' processes and calls, and
// the model's requests and tokens, in Prometheus's text format.
func TestE2EMetrics(t *testing.T) {
	addr := freeAddr(t)
	d := startDaemon(t, echoThenAnswer, daemonOptions{extra: []string{"METRICS_ADDR=" + addr}})
	d.tg.Message(alice, alice, "hi")
	d.waitText(alice, "the tool said: hi")
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, want := range []string{
		`volcanicbot_mcp_live_processes{server="fake"} 1`,
		`volcanicbot_mcp_starts_total{server="fake"} 1`,
		`volcanicbot_mcp_tool_call_seconds_count{outcome="ok",server="fake"} 1`,
		`volcanicbot_model_requests_total{outcome="ok"} 2`,
		`volcanicbot_model_tokens_total{kind="input"}`,
		`volcanicbot_mcp_memory_bytes{server="fake"}`,
		`volcanicbot_telegram_calls_total{kind="paced"}`,
		`volcanicbot_telegram_too_many_total 0`,
		`volcanicbot_telegram_coalesced_total`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`volcanicbot_mcp_memory_bytes\{server="fake"\} (\d\S*)`).FindStringSubmatch(text); m == nil || m[1] == "0" {
		t.Errorf("no memory for the live fake server: %v", m)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
}

// The real binary, SIGKILLed while a chat's 10 s tool call runs and three
// more of its messages wait (Telegram has already been told they arrived):
// after the restart all three are answered, in order and once each, and
// the chat is told its interrupted turn was cut off, without a model call.
func TestE2EMessagesWaitingAtSIGKILLAreAnsweredAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	binary := buildBinary(t)
	tg := telegramtest.New(t)
	model := llmtest.NewOpenAI(t)
	for range 50 {
		model.Push(llmtest.Func(func(req llmtest.Request) llmtest.Reply {
			if res, ok := toolResultText(req); ok {
				return llmtest.Text("tool: " + res)
			}
			if text := lastUserText(req); text != "slow" {
				return llmtest.Text("re: " + text)
			}
			return call("sleep", `{"ms":10000}`)
		}))
	}
	mcpLog := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(fakemcp.ModeLogCalls).WithLog(mcpLog)
	agentDir := t.TempDir()
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 10, "callTimeoutSeconds": 60}}})
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	environ := []string{
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", alice),
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + agentDir,
		"LLM_PROVIDER=openai", "LLM_MODEL=test", "OPENAI_API_KEY=sk-e2e-openai-0123456789", "OPENAI_BASE_URL=" + model.URL,
		"LOG_FORMAT=json", "LOG_LEVEL=debug",
	}
	start := func(logs *testkit.SyncBuffer) *exec.Cmd {
		cmd := exec.Command(binary, "run")
		cmd.Env = environ
		cmd.Stderr = logs
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
	// A first message waits a few seconds at most for the fake's tools:
	// this test needs them.
	testkit.WaitFor(t, "the fake's tools", 60*time.Second, func() bool { return strings.Contains(firstLogs.String(), "MCP catalogue ready") })
	tg.Message(alice, alice, "slow")
	fakemcp.WaitForEvents(t, mcpLog, fakemcp.EventCall, 1, 30*time.Second) // the 10 s call runs
	for _, text := range []string{"one", "two", "three"} {
		tg.Message(alice, alice, text)
	}
	if err := tg.WaitConfirmed(20 * time.Second); err != nil { // Telegram forgot them
		t.Fatal(err)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	before, sentBefore := len(model.Requests()), len(tg.Sent(alice)) // the progress message stays

	second := start(&testkit.SyncBuffer{})
	notice := "I was restarted while working on your last message"
	want := []string{notice, "re: one", "re: two", "re: three"}
	var got []string
	testkit.WaitFor(t, "the notice and the three answers after the restart", 30*time.Second, func() bool {
		got = nil
		for _, m := range tg.Sent(alice)[sentBefore:] {
			if m.Method == "sendMessage" && !m.Deleted {
				got = append(got, m.Text)
			}
		}
		return len(got) >= len(want)
	})
	if len(got) != len(want) {
		t.Errorf("%d messages after the restart, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if i < len(got) && !strings.HasPrefix(got[i], w) {
			t.Errorf("message %d after the restart = %q, want %q…", i+1, got[i], w)
		}
	}
	if n := len(model.Requests()) - before; n != 3 {
		t.Errorf("%d model requests after the restart, want 3 (the notice costs none)", n)
	}

	_ = second.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Error("the bot did not exit within 15 s of SIGTERM")
	}
}

// A chat that used a server in its recent turns gets it started while the
// model takes its first step: the model here answers its first step only
// once the server has started again (after /mcp restart), which without
// the prewarm would be never.
func TestE2EPrewarmWhileTheModelThinks(t *testing.T) {
	var d *daemon
	starts := func() int {
		events, _ := fakemcp.ParseLog(d.mcpLog)
		return len(fakemcp.Filter(events, fakemcp.EventStart))
	}
	reply := func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("the tool said: " + res)
		}
		// The model answers once the prewarm started the server: discovery,
		// the first turn's, the prewarm.
		if lastUserText(req) == "again" && !testkit.Until(20*time.Second, func() bool { return starts() >= 3 }) {
			return llmtest.Text("the server was not prewarmed")
		}
		return call("echo", fmt.Sprintf(`{"text":%q}`, lastUserText(req)))
	}
	d = startDaemon(t, reply, daemonOptions{})
	d.tg.Message(alice, alice, "first")
	d.waitText(alice, "the tool said: first")
	d.tg.Message(alice, alice, "/mcp restart fake")
	d.waitText(alice, "restarted")
	d.tg.Message(alice, alice, "again")
	d.waitText(alice, "the tool said: again")
}
