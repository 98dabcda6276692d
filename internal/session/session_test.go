package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// echoAgent calls echo with the user's text, then answers with the tool's
// output.
func echoAgent(_ context.Context, req llm.Request) (llm.Response, error) {
	if res := llmtest.LastToolResults(req); len(res) > 0 {
		return llm.Response{Text: "the tool said: " + llmtest.ResultText(res[0])}, nil
	}
	return toolCall("c1", "echo", fmt.Sprintf(`{"text":%q}`, llmtest.LastUserText(req))), nil
}

func TestMessageToolCallAnswer(t *testing.T) {
	e := newEnv(t, echoAgent, envOptions{})
	e.deliver(chat.In(1), "hello")
	got := e.chat.waitTexts(t, chat.In(1), 1)
	if got[0] != "the tool said: hello" {
		t.Errorf("answer = %q", got[0])
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	first := reqs[0]
	if !strings.Contains(first.System, "## Fake") || !strings.Contains(first.System, "volcanicbot") {
		t.Errorf("system prompt lacks the base or the server's section:\n%s", first.System)
	}
	var names []string
	for _, tl := range first.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, SendToolName) || !slices.Contains(names, "echo") || !slices.Contains(names, "weird_name_x") {
		t.Errorf("tools offered: %v", names)
	}
	if e.chat.toolCalls[chat.In(1)][0] != "echo" {
		t.Errorf("activity saw %v", e.chat.toolCalls[chat.In(1)])
	}
	// The workspace and the private folder exist, 0700, side by side; the
	// transcript is in the private one, and nothing of the bot's is in the
	// workspace (what the chat's servers see).
	ws, private := e.manager.Workspace(chat.In(1)), e.manager.Private(chat.In(1))
	for _, dir := range []string{ws, private} {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", dir, fi.Mode(), err)
		}
	}
	if filepath.Dir(ws) == filepath.Dir(private) || strings.HasPrefix(private, ws+string(filepath.Separator)) {
		t.Errorf("private folder %s, workspace %s: want them apart", private, ws)
	}
	if entries, err := os.ReadDir(ws); err != nil || len(entries) != 0 {
		t.Errorf("the workspace holds %v (%v), want nothing of the bot's", entries, err)
	}
	if lines := readLines(t, filepath.Join(private, transcriptName)); len(lines) != 4 {
		t.Errorf("transcript has %d lines, want 4 (user, call, result, answer)", len(lines))
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestRestartContinuesHistory(t *testing.T) {
	dir := t.TempDir()
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: fmt.Sprintf("seen %d messages", len(req.Messages))}, nil
	}
	e := newEnv(t, answer, envOptions{dataDir: dir})
	e.deliver(chat.In(7), "one")
	e.chat.waitTexts(t, chat.In(7), 1)
	e.close()

	// A new process over the same data dir, with a torn last line (a
	// crash mid-write) in the transcript.
	path := filepath.Join(dir, "private", "7", transcriptName)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"role":"user","parts":[{"kind":"te`)
	f.Close()

	e2 := newEnv(t, answer, envOptions{dataDir: dir})
	e2.deliver(chat.In(7), "two")
	got := e2.chat.waitTexts(t, chat.In(7), 1)
	if got[0] != "seen 3 messages" {
		t.Errorf("after restart: %q, want the earlier two messages plus the new one", got[0])
	}
	msgs := e2.model.Requests()[0].Messages
	if llmtest.LastUserText(llm.Request{Messages: msgs[:1]}) != "one" {
		t.Errorf("history = %+v", msgs)
	}
}

func TestMessagesDuringATurnWaitInOrder(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []string
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		text := llmtest.LastUserText(req)
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
		if text == "first" {
			started <- struct{}{}
			<-release
		}
		return llm.Response{Text: "re: " + text}, nil
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(3), "first")
	await(t, started, "the first turn")
	e.deliver(chat.In(3), "second")
	e.deliver(chat.In(3), "third")
	close(release)
	got := e.chat.waitTexts(t, chat.In(3), 3)
	if !slices.Equal(got, []string{"re: first", "re: second", "re: third"}) {
		t.Errorf("answers = %q", got)
	}
	if !slices.Equal(seen, []string{"first", "second", "third"}) {
		t.Errorf("model saw %q", seen)
	}
}

func TestTwoChatsRunConcurrentlyWithoutMixing(t *testing.T) {
	var inFlight sync.WaitGroup
	inFlight.Add(2)
	both := make(chan struct{})
	go func() { inFlight.Wait(); close(both) }()
	var once sync.Map
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		text := llmtest.LastUserText(req)
		if _, loaded := once.LoadOrStore(text, true); !loaded {
			inFlight.Done()
			select { // both turns must be running at once
			case <-both:
			case <-time.After(10 * time.Second):
				return llm.Response{}, errors.New("the other chat's turn never ran concurrently")
			}
		}
		return echoAgent(ctx, req)
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(10), "from ten")
	e.deliver(chat.In(20), "from twenty")
	if got := e.chat.waitTexts(t, chat.In(10), 1); got[0] != "the tool said: from ten" {
		t.Errorf("chat 10: %q", got)
	}
	if got := e.chat.waitTexts(t, chat.In(20), 1); got[0] != "the tool said: from twenty" {
		t.Errorf("chat 20: %q", got)
	}
	if e.mcpPID(chat.In(10)) == e.mcpPID(chat.In(20)) {
		t.Error("two chats share one MCP process")
	}
}

func TestStopCancelsASlowTool(t *testing.T) {
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "done"}, nil
		}
		return toolCall("s1", "slow", `{}`), nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeLogCalls}})
	e.deliver(chat.In(5), "go slow")
	waitForCall(t, e, fakemcp.ToolSlow, 1)
	if !e.manager.Stop(chat.In(5)) {
		t.Fatal("Stop found no running turn")
	}
	got := e.chat.waitTexts(t, chat.In(5), 1)
	if got[0] != "Stopped." {
		t.Errorf("reply = %q", got)
	}
	fakemcp.WaitForEvents(t, e.mcpLog, fakemcp.EventCancelled, 1, 5*time.Second)
	if e.manager.Stop(chat.In(5)) {
		t.Error("Stop found a turn after it ended")
	}
	// The transcript stays consistent: the call has its (cancelled) result.
	e.deliver(chat.In(5), "again")
	e.chat.waitTexts(t, chat.In(5), 2)
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1]
	var calls, results int
	for _, m := range last.Messages {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				calls++
			}
			if p.ToolResult != nil {
				results++
			}
		}
	}
	if calls != results {
		t.Errorf("%d calls, %d results in the next request", calls, results)
	}
}

// waitForCall waits until the fake server (mode log-calls) has received n
// calls of tool.
func waitForCall(t *testing.T, e *env, tool string, n int) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("%d calls of %s at the fake server", n, tool), 20*time.Second, func() bool {
		calls := 0
		for _, ev := range fakemcp.Filter(fakemcp.ReadLog(t, e.mcpLog), fakemcp.EventCall) {
			if ev.Tool == tool {
				calls++
			}
		}
		return calls >= n
	})
}

func TestNewStopsProcessesAndStartsAFreshTranscript(t *testing.T) {
	e := newEnv(t, echoAgent, envOptions{})
	e.deliver(chat.In(9), "hi")
	e.chat.waitTexts(t, chat.In(9), 1)
	pid := e.mcpPID(chat.In(9))
	if pid == 0 {
		t.Fatal("no MCP process")
	}
	if err := e.manager.Reset(context.Background(), chat.In(9)); err != nil {
		t.Fatal(err)
	}
	if !pidGone(pid) {
		t.Errorf("MCP process %d survived /new", pid)
	}
	dir := e.manager.Private(chat.In(9))
	archived, _ := filepath.Glob(filepath.Join(dir, "transcript-*.jsonl"))
	if len(archived) != 1 {
		t.Errorf("archived transcripts: %v", archived)
	}
	e.deliver(chat.In(9), "fresh")
	e.chat.waitTexts(t, chat.In(9), 2)
	reqs := e.model.Requests()
	if n := len(reqs[len(reqs)-2].Messages); n != 1 {
		t.Errorf("first request after /new has %d messages, want 1", n)
	}
	if e.mcpPID(chat.In(9)) == pid {
		t.Error("the same process after /new")
	}
}

func TestSendTool(t *testing.T) {
	var mu sync.Mutex
	var results []llm.ToolResult
	paths := []string{"out/pic.png", "../escape.txt", "/etc/passwd", "link/secret.txt", ".volcanic/transcript.jsonl", "missing.txt"}
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			mu.Lock()
			results = res
			mu.Unlock()
			return llm.Response{Text: "ok"}, nil
		}
		var calls []llm.ToolCall
		for i, p := range paths {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprint(i), Name: SendToolName,
				Arguments: []byte(fmt.Sprintf(`{"path":%q,"caption":"c%d"}`, p, i))})
		}
		return llm.Response{ToolCalls: calls}, nil
	}
	e := newEnv(t, answer, envOptions{})
	ws := e.manager.Workspace(chat.In(4))
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o600)
	os.MkdirAll(filepath.Join(ws, "out"), 0o700)
	os.WriteFile(filepath.Join(ws, "out", "pic.png"), fakemcp.PNG1x1(), 0o600)
	os.Symlink(outside, filepath.Join(ws, "link"))

	e.deliver(chat.In(4), "send them")
	e.chat.waitTexts(t, chat.In(4), 1)
	files := e.chat.Files(chat.In(4))
	if len(files) != 1 || files[0] != "pic.png|c0" || e.chat.Contents(chat.In(4))[0] != string(fakemcp.PNG1x1()) {
		t.Errorf("sent files = %v", files)
	}
	wantErr := []string{"", "leaves the workspace", "is absolute", "symlink", "no file at", "no file at"}
	for i, r := range results {
		text := llmtest.ResultText(r)
		if wantErr[i] == "" {
			if r.IsError {
				t.Errorf("send %s failed: %s", paths[i], text)
			}
			continue
		}
		if !r.IsError || !strings.Contains(text, wantErr[i]) {
			t.Errorf("send %s = %v %q, want an error containing %q", paths[i], r.IsError, text, wantErr[i])
		}
	}
}

func TestStepCap(t *testing.T) {
	n := 0
	answer := func(context.Context, llm.Request) (llm.Response, error) {
		n++
		return toolCall(fmt.Sprint(n), "echo", `{"text":"again"}`), nil
	}
	e := newEnv(t, answer, envOptions{maxSteps: 3})
	e.deliver(chat.In(2), "loop forever")
	got := e.chat.waitTexts(t, chat.In(2), 1)
	if !strings.Contains(got[0], "stopped after 3 steps") {
		t.Errorf("reply = %q", got[0])
	}
	if len(e.model.Requests()) != 3 {
		t.Errorf("%d model calls, want 3", len(e.model.Requests()))
	}
}

func TestModelErrorTellsTheUserBriefly(t *testing.T) {
	answer := func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{}, &llm.Error{Provider: "openai", Status: 429, Message: "rate limited: key sk-live-abcdefgh"}
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(6), "hi")
	got := e.chat.waitTexts(t, chat.In(6), 1)
	if !strings.Contains(got[0], "rate-limiting") || strings.Contains(got[0], "sk-live") {
		t.Errorf("reply = %q", got[0])
	}
}

func TestToolImagesReachTheModelAndAreStoredAsFiles(t *testing.T) {
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "saw it"}, nil
		}
		return toolCall("i1", "image", `{}`), nil
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(8), "picture")
	e.chat.waitTexts(t, chat.In(8), 1)
	res := llmtest.LastToolResults(e.model.Requests()[1])
	if len(res) != 1 || len(res[0].Content) == 0 || res[0].Content[0].Image == nil ||
		string(res[0].Content[0].Image.Data) != string(fakemcp.PNG1x1()) {
		t.Fatalf("tool result sent to the model: %+v", res)
	}
	transcript, _ := os.ReadFile(filepath.Join(e.manager.Private(chat.In(8)), transcriptName))
	if strings.Contains(string(transcript), `"data"`) {
		t.Error("the transcript holds image bytes")
	}
	images, _ := filepath.Glob(filepath.Join(e.manager.Private(chat.In(8)), imagesDir, "*.png"))
	if len(images) != 1 {
		t.Errorf("stored images: %v", images)
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	const secret = "ghp_session_secret_123456"
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "the env says " + llmtest.ResultText(res[0]) + " and " + secret}, nil
		}
		return toolCall("e1", "env", `{}`), nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeEnv}, secrets: []string{secret},
		host: []string{"MY_SETTING=" + secret}})
	e.deliver(chat.In(11), "env")
	got := e.chat.waitTexts(t, chat.In(11), 1)
	if strings.Contains(got[0], secret) {
		t.Errorf("the reply holds the secret")
	}
	res := llmtest.LastToolResults(e.model.Requests()[1])
	if strings.Contains(llmtest.ResultText(res[0]), secret) || !strings.Contains(llmtest.ResultText(res[0]), "[REDACTED]") {
		t.Errorf("the tool result reached the model unredacted")
	}
}

func TestMCPStatusAndRestart(t *testing.T) {
	e := newEnv(t, echoAgent, envOptions{})
	ctx := context.Background()
	e.mcp.Discover(ctx) // /mcp does not wait for the discovery
	st, err := e.manager.MCPStatus(ctx, chat.In(12))
	if err != nil || len(st.Servers) != 1 || st.Servers[0].Name != "fake" || st.Servers[0].State != chat.ServerNotStarted {
		t.Errorf("/mcp before: %+v %v", st, err)
	}
	if _, err := os.Stat(e.manager.Workspace(chat.In(12))); !os.IsNotExist(err) {
		t.Errorf("/mcp created the workspace: %v", err)
	}
	e.deliver(chat.In(12), "x")
	e.chat.waitTexts(t, chat.In(12), 1)
	if st, _ := e.manager.MCPServer(ctx, chat.In(12), "fake"); st.State != chat.ServerRunning || st.PID == 0 {
		t.Errorf("/mcp after: %+v", st)
	}
	pid := e.mcpPID(chat.In(12))
	if err := e.manager.MCPRestart(chat.In(12), "fake"); err != nil {
		t.Fatal(err)
	}
	if !pidGone(pid) {
		t.Error("restart left the process")
	}
	if got := e.manager.ServerNames(); !slices.Equal(got, []string{"fake"}) {
		t.Errorf("servers = %v", got)
	}
}

func TestCloseEndsTurnsAndProcesses(t *testing.T) {
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		return toolCall("s", "slow", `{}`), nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeLogCalls}})
	e.deliver(chat.In(13), "slow")
	waitForCall(t, e, fakemcp.ToolSlow, 1)
	pid := e.mcpPID(chat.In(13))
	start := time.Now()
	e.close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("close took %v", d)
	}
	if !pidGone(pid) {
		t.Error("MCP process survived Close")
	}
	if err := e.manager.Deliver(chat.In(13), Message{Text: "late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Deliver after Close: %v", err)
	}
}

// /new drops the messages still waiting behind a running turn.
func TestNewDropsWaitingMessages(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []string
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		text := llmtest.LastUserText(req)
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
		if text == "busy" {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return llm.Response{}, ctx.Err()
			}
		}
		return llm.Response{Text: "re: " + text}, nil
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(14), "busy")
	e.deliver(chat.In(14), "old one")
	e.deliver(chat.In(14), "old two")
	await(t, started, "the model to answer \"busy\"") // the others wait
	if err := e.manager.Reset(context.Background(), chat.In(14)); err != nil {
		t.Fatal(err)
	}
	close(release)
	e.deliver(chat.In(14), "fresh")
	e.chat.waitTexts(t, chat.In(14), 2) // "Stopped." and the fresh answer
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{"busy", "fresh"}) {
		t.Errorf("the model saw %q: the waiting messages were not dropped", seen)
	}
}
