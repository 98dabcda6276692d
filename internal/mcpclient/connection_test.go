package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestCatalogPassesToolsThrough(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	cfg.ToolPrefix = "f_"
	h := newHarness(t, nil, cfg)

	cat, err := h.cache.get(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cat.ServerInfo.Name != fakemcp.ServerName || cat.ServerInfo.ProtocolVersion != defaultProtocolVersion {
		t.Errorf("server info = %+v, want %s on %s", cat.ServerInfo, fakemcp.ServerName, defaultProtocolVersion)
	}
	byMCP := map[string]Tool{}
	for _, tl := range cat.Tools {
		byMCP[tl.MCPName] = tl
	}
	wantNames := map[string]string{
		fakemcp.ToolEcho:           "f_echo",
		fakemcp.ToolWeird:          "f_weird_name_x",
		fakemcp.ToolWeirdSanitised: "f_weird_name_x_2",
	}
	for mcpName, want := range wantNames {
		if got := byMCP[mcpName].Name; got != want {
			t.Errorf("exposed name of %q = %q, want %q", mcpName, got, want)
		}
	}
	long := byMCP[fakemcp.LongToolName]
	if len(long.Name) != MaxToolNameLen || !strings.HasPrefix(long.Name, "f_a_tool_whose") {
		t.Errorf("long name exposed as %q (%d chars)", long.Name, len(long.Name))
	}
	if got := string(byMCP[fakemcp.ToolNoSchema].InputSchema); got != `{"type":"object"}` {
		t.Errorf("missing schema became %s", got)
	}
	// The rich schema arrives byte for byte, $schema included; the model
	// gets it without the top-level $schema.
	rich := byMCP[fakemcp.ToolRichSchema].InputSchema
	if got := string(rich); got != fakemcp.RichSchema {
		t.Errorf("rich schema changed:\n got %s\nwant %s", got, fakemcp.RichSchema)
	}
	want := strings.Replace(fakemcp.RichSchema, `"$schema":"https://json-schema.org/draft/2020-12/schema",`, "", 1)
	if got := string(ModelSchema(rich)); got != want {
		t.Errorf("the model's rich schema:\n got %s\nwant %s", got, want)
	}
	if byMCP[fakemcp.ToolEcho].Description == "" {
		t.Error("echo lost its description")
	}
}

func TestCatalogPaginated(t *testing.T) {
	cfg, _ := fakeServer(t, "fake", fakemcp.ModePaginated)
	h := newHarness(t, nil, cfg)
	cat, err := h.cache.get(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range cat.Tools {
		names = append(names, tl.MCPName)
	}
	if want := fakemcp.ToolNames(fakemcp.ModePaginated); !slices.Equal(names, want) {
		t.Errorf("paginated tools = %v, want %v", names, want)
	}
}

func TestCallUsesMCPNameOnTheWire(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeLogCalls)
	h := newHarness(t, nil, cfg)
	s := h.session("")
	tool := h.tool("fake", fakemcp.ToolWeird)
	if tool.Name != "weird_name_x" {
		t.Fatalf("exposed as %q", tool.Name)
	}
	res := h.call(s, tool, `{}`)
	if res.IsError {
		t.Fatalf("error result: %s", res.Text())
	}
	calls := fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventCall)
	if len(calls) != 1 || calls[0].Tool != fakemcp.ToolWeird {
		t.Errorf("server saw calls %+v, want one of %q", calls, fakemcp.ToolWeird)
	}
}

func TestOneDiscoveryForConcurrentSessions(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeCountStarts)
	h := newHarness(t, nil, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			tools, _ := h.client.Tools(context.Background())
			if len(tools) == 0 {
				errs <- errors.New("no tools")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if starts := fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart); len(starts) != 1 {
		t.Errorf("%d discovery starts for 100 concurrent sessions, want 1", len(starts))
	}
}

func TestDiscoveryFailureIsCachedForTheCooldown(t *testing.T) {
	cfg, logPath := fakeServer(t, "broken", fakemcp.ModeCrashOnStart, fakemcp.ModeCountStarts)
	cfg = withEnv(cfg, fakemcp.EnvDieMessage, "no module named volcano")
	good, _ := fakeServer(t, "good")
	h := newHarness(t, nil, cfg, good)

	_, err := h.cache.get(context.Background(), cfg)
	if err == nil {
		t.Fatal("discovery of a crashing server succeeded")
	}
	for _, want := range []string{"exited (1) during start-up", "Traceback", "no module named volcano"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Within the cooldown: no new spawn, the same error.
	tools, _ := h.client.Tools(context.Background())
	if len(tools) == 0 {
		t.Error("the good server's tools are missing")
	}
	for _, tl := range tools {
		if tl.Server == "broken" {
			t.Errorf("broken server contributed %s", tl.Name)
		}
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 1 {
		t.Errorf("%d starts within the cooldown, want 1", n)
	}
	// After it: tried again in the background; no caller waits for the
	// retry (the old failure comes at once while it runs), and the callers
	// after it get the new outcome.
	h.now.Advance(DefaultFailureCooldown + time.Second)
	if _, err := h.cache.get(context.Background(), cfg); err == nil {
		t.Fatal("the stale failure was not returned")
	}
	fakemcp.WaitForEvents(t, logPath, fakemcp.EventStart, 2, 5*time.Second)
	testkit.WaitFor(t, "the retry", 5*time.Second, func() bool { return !h.cache.running(cfg) })
	if _, err := h.cache.get(context.Background(), cfg); err == nil {
		t.Fatal("second discovery succeeded")
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
		t.Errorf("%d starts after the cooldown, want 2", n)
	}
}

func TestHangOnStartGivesUpAfterStartupTimeout(t *testing.T) {
	cfg, _ := fakeServer(t, "hang", fakemcp.ModeHangOnStart)
	cfg.StartupTimeout = 300 * time.Millisecond
	good, _ := fakeServer(t, "good")
	h := newHarness(t, nil, cfg, good)

	tools, _ := h.client.Tools(context.Background())
	if len(tools) == 0 {
		t.Fatal("the good server's tools are missing")
	}
	_, err := h.cache.get(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "no answer within the startup timeout of 0.3s") {
		t.Errorf("err = %v", err)
	}
	s := h.session("")
	if st := statusOf(t, s, "hang"); !strings.HasPrefix(st.DiscoveryError, "hang: no answer") {
		t.Errorf("/mcp hang: %+v", st)
	}
	if st := statusOf(t, s, "good"); st.DiscoveryError != "" || st.State != chat.ServerNotStarted {
		t.Errorf("/mcp good: %+v", st)
	}
}

func TestLazyStartInWorkspace(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeCountStarts)
	cfg.Args = []string{"--flag", "${workspace}/out"}
	h := newHarness(t, nil, cfg)
	tool := h.tool("fake", fakemcp.ToolEcho) // discovery: one start
	ws := t.TempDir()
	s := h.session(ws)
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 1 {
		t.Fatalf("%d starts before the first call, want 1 (discovery only)", n)
	}
	if st, _ := s.Status("fake"); st.State != StateNotStarted {
		t.Errorf("state before a call = %v", st.State)
	}
	res := h.call(s, tool, `{"text":"hello"}`)
	if res.IsError || res.Text() != "hello" {
		t.Fatalf("echo = %+v", res)
	}
	starts := fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)
	if len(starts) != 2 {
		t.Fatalf("%d starts, want 2", len(starts))
	}
	discovery, live := starts[0], starts[1]
	if live.Cwd != ws {
		t.Errorf("session process cwd = %s, want %s", live.Cwd, ws)
	}
	if !slices.Equal(live.Args, []string{"--flag", ws + "/out"}) {
		t.Errorf("session args = %v", live.Args)
	}
	if discovery.Cwd == ws || !strings.Contains(discovery.Cwd, "volcanicbot-discover-") {
		t.Errorf("discovery ran in %s, want a temp dir", discovery.Cwd)
	}
	if st, _ := s.Status("fake"); st.State != StateRunning || st.PID != live.PID {
		t.Errorf("status = %+v, want running pid %d", st, live.PID)
	}
	// The temp discovery dir is removed in the background.
	testkit.WaitFor(t, "discovery dir removal", 5*time.Second, func() bool {
		_, err := os.Stat(discovery.Cwd)
		return os.IsNotExist(err)
	})
}

func TestEnvironmentFiltered(t *testing.T) {
	host := []string{
		"OPENAI_API_KEY=sk-openai-0123456789",
		"GITHUB_TOKEN=ghp_host_token_0123456789",
		"TELEGRAM_BOT_TOKEN=123456:telegram-secret",
		"MY_PLAIN_SETTING=visible",
	}
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeEnv, fakemcp.ModeCountStarts)
	cfg = withEnv(cfg, "GITHUB_TOKEN", "${env:GITHUB_TOKEN}")
	cfg = withEnv(cfg, "WS", "${workspace}")
	h := newHarness(t, host, cfg)
	ws := t.TempDir()
	s := h.session(ws)
	out := h.call(s, h.tool("fake", fakemcp.ToolEnv), `{}`)
	if out.IsError {
		t.Fatal(out.Text())
	}
	env := out.Text()
	for _, secret := range []string{"sk-openai", "telegram-secret", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN"} {
		if strings.Contains(env, secret) {
			t.Errorf("server environment contains %q:\n%s", secret, env)
		}
	}
	for _, want := range []string{"GITHUB_TOKEN=ghp_host_token_0123456789", "MY_PLAIN_SETTING=visible", "WS=" + ws} {
		if !strings.Contains(env, want) {
			t.Errorf("server environment lacks %q", want)
		}
	}
	// Discovery and the session process agree (but for ${workspace}).
	starts := fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)
	if len(starts) != 2 {
		t.Fatalf("%d starts", len(starts))
	}
	strip := func(env []string) []string {
		return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			return strings.HasPrefix(kv, "WS=") || strings.HasPrefix(kv, "PWD=")
		})
	}
	if !slices.Equal(strip(starts[0].Env), strip(starts[1].Env)) {
		t.Errorf("discovery env %v\nsession env %v", starts[0].Env, starts[1].Env)
	}
}

func TestResults(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")

	img := h.call(s, h.tool("fake", fakemcp.ToolImage), `{}`)
	if img.Images != 1 || img.Content[0].Kind != chat.ImagePart || img.Content[0].MIMEType != "image/png" ||
		string(img.Content[0].Data) != string(fakemcp.PNG1x1()) {
		t.Errorf("image result = %+v", img)
	}
	fail := h.call(s, h.tool("fake", fakemcp.ToolFail), `{}`)
	if !fail.IsError || fail.Text() != fakemcp.FailText {
		t.Errorf("fail result = %+v", fail)
	}
	big := h.call(s, h.tool("fake", fakemcp.ToolBigImage), `{}`)
	if big.Images != 0 || !strings.Contains(big.Text(), "[image omitted: image/png,") {
		t.Errorf("big image result = %q", big.Text())
	}
	h.client.maxResultTokens = 2000 // the 3000 lines are about 7,700 tokens
	long := h.call(s, h.tool("fake", fakemcp.ToolLongText), `{}`)
	h.client.maxResultTokens = DefaultMaxResultTokens
	m := regexp.MustCompile(`saved in the workspace at (results/\S+\.txt) \(3000 lines\)`).FindStringSubmatch(long.Text())
	if !long.Truncated || estimateTokens(long.Text()) > 2000+noteTokens || m == nil {
		t.Fatalf("long text not bounded (%d tokens):\n…%s", estimateTokens(long.Text()), long.Text()[max(0, len(long.Text())-400):])
	}
	saved, err := os.ReadFile(filepath.Join(s.Workspace(), m[1]))
	if err != nil || strings.Count(string(saved), "\n") != fakemcp.LongTextLines || !strings.HasSuffix(string(saved), "line 3000\n") {
		t.Errorf("the saved result: %d lines, %v", strings.Count(string(saved), "\n"), err)
	}
	unknown := h.call(s, h.tool("fake", fakemcp.ToolUnknownContent), `{}`)
	if unknown.IsError || !strings.Contains(unknown.Text(), "hologram") {
		t.Errorf("unknown content = %+v", unknown)
	}
	structured := h.call(s, h.tool("fake", fakemcp.ToolStructured), `{}`)
	if !strings.Contains(structured.Text(), `"city":"Reykjavik"`) {
		t.Errorf("structured = %q", structured.Text())
	}
}

func TestJSONRPCErrorKeepsServerAlive(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"a"}`)
	before, _ := s.Status("fake")
	res := h.call(s, h.tool("fake", fakemcp.ToolJSONRPCError), `{}`)
	if !res.IsError || !strings.Contains(res.Text(), fakemcp.JSONRPCErrorMessage) {
		t.Errorf("result = %+v", res)
	}
	after, _ := s.Status("fake")
	if after.State != StateRunning || after.PID != before.PID {
		t.Errorf("after a JSON-RPC error: %+v (before pid %d)", after, before.PID)
	}
}

func TestCancellationReachesServer(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	slow := h.tool("fake", fakemcp.ToolSlow)
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"warm"}`)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := s.Call(ctx, slow, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	ev := fakemcp.WaitForEvents(t, logPath, fakemcp.EventCancelled, 1, 5*time.Second)
	if ev[0].Tool != fakemcp.ToolSlow {
		t.Errorf("cancelled event = %+v", ev[0])
	}
	// The server is still usable.
	if res := h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"again"}`); res.Text() != "again" {
		t.Errorf("after cancel: %+v", res)
	}
}

func TestCallTimeout(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake")
	cfg.CallTimeout = 300 * time.Millisecond
	h := newHarness(t, nil, cfg)
	s := h.session("")
	res := h.call(s, h.tool("fake", fakemcp.ToolSleep), `{"ms":10000}`)
	if !res.IsError || res.Text() != "sleep timed out after 0.3s" {
		t.Errorf("result = %+v", res)
	}
	fakemcp.WaitForEvents(t, logPath, fakemcp.EventCancelled, 1, 5*time.Second)
}

// A server that dies between calls: the next call is not made; its result
// tells the model that the server exited and state such as the browser's
// was lost (the reference behaviour); the call after it starts a new
// process. The crashed process's stderr stays visible in /mcp <name> after
// the respawn.
func TestCrashAndRestart(t *testing.T) {
	cfg, logPath := fakeServer(t, "fake", fakemcp.ModeDieAfterFirstCall, fakemcp.ModeCountStarts)
	cfg = withEnv(cfg, fakemcp.EnvDieMessage, "out of memory-ish")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	echo := h.tool("fake", fakemcp.ToolEcho)

	if res := h.call(s, echo, `{"text":"one"}`); res.Text() != "one" {
		t.Fatalf("first call = %+v", res)
	}
	first, _ := s.Status("fake")
	testkit.WaitFor(t, "the exit", 5*time.Second, func() bool {
		st, _ := s.Status("fake")
		return st.State == StateExited
	})
	if !gone(first.PID) {
		t.Errorf("pid %d still exists after exiting (zombie?)", first.PID)
	}
	if st := statusOf(t, s, "fake"); st.State != chat.ServerExited {
		t.Errorf("/mcp after the exit: %+v", st)
	}
	res := h.call(s, echo, `{"text":"two"}`)
	if !res.IsError || !strings.HasPrefix(res.Text(), "fake MCP server exited (3): ") ||
		!strings.Contains(res.Text(), "dying: out of memory-ish") || !strings.Contains(res.Text(), "browser state was lost") {
		t.Fatalf("the call after the exit = %+v, want the exit reported", res)
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
		t.Errorf("%d starts after the reported exit, want 2 (discovery + 1): the call must not run", n)
	}
	res = h.call(s, echo, `{"text":"three"}`)
	if res.IsError || res.Text() != "three" {
		t.Fatalf("the call after the report = %+v", res)
	}
	second, _ := s.Status("fake")
	if second.PID == first.PID || second.Starts != 2 {
		t.Errorf("not respawned: %+v", second)
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 3 {
		t.Errorf("%d starts, want 3 (discovery + 2)", n)
	}
	if detail := detailOf(t, s, "fake"); detail.State != chat.ServerRunning || detail.LastExit != "exited (3)" ||
		!strings.Contains(strings.Join(detail.ExitTail, "\n"), "dying: out of memory-ish") {
		t.Errorf("/mcp fake after the respawn: %+v", detail)
	}
}

func TestCrashDuringCallReportsExit(t *testing.T) {
	cfg, _ := fakeServer(t, "fake", fakemcp.ModeDieAfterFirstCall)
	cfg = withEnv(cfg, fakemcp.EnvDieMessage, "segfault-ish")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"one"}`)
	// The process dies ~200 ms after the first call; a slow call is in
	// flight when it does.
	res := h.call(s, h.tool("fake", fakemcp.ToolSlow), `{}`)
	want := "fake MCP server exited (3): "
	if !res.IsError || !strings.HasPrefix(res.Text(), want) ||
		!strings.Contains(res.Text(), "dying: segfault-ish") ||
		!strings.HasSuffix(res.Text(), ". It restarts on the next call; browser state was lost.") {
		t.Errorf("result = %q", res.Text())
	}
	// No automatic retry: the next call starts a new process.
	if res := h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"back"}`); res.Text() != "back" {
		t.Errorf("after the crash: %+v", res)
	}
}

func TestExitMessageIsRedacted(t *testing.T) {
	const secret = "ghp_super_secret_value_42"
	cfg, _ := fakeServer(t, "fake", fakemcp.ModeDieAfterFirstCall, fakemcp.ModeStderrChatter)
	cfg = withEnv(cfg, fakemcp.EnvDieMessage, "token "+secret)
	cfg = withEnv(cfg, fakemcp.EnvSecret, secret)
	h := newHarness(t, nil, cfg)
	h.secrets.Add(secret)
	s := h.session("")
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"one"}`)
	res := h.call(s, h.tool("fake", fakemcp.ToolSlow), `{}`)
	if strings.Contains(res.Text(), secret) || !strings.Contains(res.Text(), "[REDACTED]") {
		t.Errorf("exit message = %q", res.Text())
	}
	// What /mcp fake shows of the exit: the chat redacts it whole with
	// the client's secrets.
	if detail := h.secrets.Redact(fmt.Sprintf("%+v", detailOf(t, s, "fake"))); strings.Contains(detail, secret) || !strings.Contains(detail, "[REDACTED]") {
		t.Errorf("/mcp fake: %s", detail)
	}
	if strings.Contains(h.logs.String(), secret) {
		t.Errorf("the log holds the secret:\n%s", h.logs.String())
	}
}

// A chat's process stops after idleTimeoutSeconds without a call — each
// call starts the wait anew — and the next call starts a fresh one. On a
// synctest clock: the real half hour passes in no time.
func TestIdleStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mcpconfig.ServerConfig{Name: "mem", Command: "/bin/true", Enabled: true,
			StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, IdleTimeout: 30 * time.Minute}
		mem := &memServer{}
		h := newHarness(t, nil, cfg)
		h.client.sp.dial = mem.dial
		s := h.session("")
		echo := Tool{Server: "mem", MCPName: "echo", Name: "echo"}
		running := func() bool { st, _ := s.Status("mem"); return st.State == StateRunning }

		h.call(s, echo, `{"text":"x"}`)
		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if !running() {
			t.Fatal("stopped before the idle timeout")
		}
		h.call(s, echo, `{"text":"y"}`) // the wait starts anew
		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if !running() {
			t.Fatal("a call did not restart the idle wait")
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if st, _ := s.Status("mem"); st.State != StateNotStarted {
			t.Errorf("state after the idle timeout = %v, want not started", st.State)
		}
		if starts, terminated := mem.counts(); terminated != starts {
			t.Errorf("%d starts, %d stopped: the idle process was not stopped", starts, terminated)
		}
		if res := h.call(s, echo, `{"text":"z"}`); res.Text() != "z" {
			t.Errorf("call after the idle stop = %+v", res)
		}
		if st, _ := s.Status("mem"); st.Starts != 2 {
			t.Errorf("starts in the chat = %d, want 2", st.Starts)
		}
	})
}

func TestIdleStopNeverKillsACall(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	cfg.IdleTimeout = time.Millisecond
	h := newHarness(t, nil, cfg)
	s := h.session("")
	echo := h.tool("fake", fakemcp.ToolEcho)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				want := fmt.Sprintf("%d-%d", g, i)
				res := h.call(s, echo, `{"text":"`+want+`"}`)
				if res.IsError || res.Text() != want {
					t.Errorf("call %s = %+v", want, res)
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

func TestStopKillsProcessGroup(t *testing.T) {
	for _, modes := range [][]string{
		{fakemcp.ModeGrandchild},
		{fakemcp.ModeGrandchild, fakemcp.ModeIgnoreSIGTERM},
	} {
		t.Run(strings.Join(modes, "+"), func(t *testing.T) {
			cfg, logPath := fakeServer(t, "fake", modes...)
			h := newHarness(t, nil, cfg)
			s := h.session("")
			h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"x"}`)
			st, _ := s.Status("fake")
			grand := fakemcp.Filter(fakemcp.WaitForEvents(t, logPath, fakemcp.EventGrandchild, 2, 5*time.Second), fakemcp.EventGrandchild)
			var grandPID int
			for _, ev := range grand {
				if ev.Parent == st.PID {
					grandPID = ev.PID
				}
			}
			if grandPID == 0 {
				t.Fatalf("no grandchild of %d in %+v", st.PID, grand)
			}
			s.Close()
			if !gone(st.PID) {
				t.Errorf("server %d survived Close", st.PID)
			}
			testkit.WaitFor(t, "the grandchild's end", 5*time.Second, func() bool { return !fakemcp.Alive(grandPID) })
			s.Close() // idempotent
			if _, err := s.Call(context.Background(), h.tool("fake", fakemcp.ToolEcho), []byte(`{}`)); !errors.Is(err, ErrClosed) {
				t.Errorf("call after Close: %v", err)
			}
		})
	}
}

func TestRestartStartsFreshProcess(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	echo := h.tool("fake", fakemcp.ToolEcho)
	h.call(s, echo, `{"text":"x"}`)
	first, _ := s.Status("fake")
	if err := s.Restart("fake"); err != nil {
		t.Fatal(err)
	}
	if !gone(first.PID) {
		t.Errorf("pid %d survived the restart", first.PID)
	}
	if st, _ := s.Status("fake"); st.State != StateNotStarted {
		t.Errorf("state after restart = %v", st.State)
	}
	h.call(s, echo, `{"text":"y"}`)
	if second, _ := s.Status("fake"); second.PID == first.PID || second.State != StateRunning {
		t.Errorf("after restart: %+v", second)
	}
	var unknown *chat.UnknownServerError
	if err := s.Restart("nope"); !errors.As(err, &unknown) || unknown.Name != "nope" || !slices.Equal(unknown.Configured, []string{"fake"}) {
		t.Errorf("restart of an unknown server: %v", err)
	}
}

func TestClientCloseStopsEverySession(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	echo := h.tool("fake", fakemcp.ToolEcho)
	var pids []int
	for range 3 {
		s := h.session("")
		h.call(s, echo, `{"text":"x"}`)
		st, _ := s.Status("fake")
		pids = append(pids, st.PID)
	}
	start := time.Now()
	h.client.Close()
	elapsed := time.Since(start)
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d survived Client.Close", pid)
		}
	}
	if _, err := h.client.NewSession(t.TempDir(), t.TempDir()); !errors.Is(err, ErrClosed) {
		t.Errorf("NewSession after Close: %v", err)
	}
	t.Logf("closed 3 sessions in %v", elapsed)
}

func TestCollisions(t *testing.T) {
	a, _ := fakeServer(t, "alpha", fakemcp.ModeBuiltinClash)
	b, _ := fakeServer(t, "beta")
	h := newHarness(t, nil, a, b)
	tools, refusals := h.client.Tools(context.Background())
	owner := map[string]string{}
	for _, tl := range tools {
		owner[tl.Name] = tl.Server
	}
	if _, ok := owner["send"]; ok {
		t.Error("an MCP tool took the built-in name send")
	}
	if owner["echo"] != "alpha" {
		t.Errorf("echo belongs to %q, want the first server alpha", owner["echo"])
	}
	var sawBuiltin, sawDup bool
	for _, r := range refusals {
		s := r.String()
		if strings.Contains(s, "send") && strings.Contains(s, "toolPrefix") {
			sawBuiltin = true
		}
		if strings.Contains(s, "echo") && strings.Contains(s, "alpha") && strings.Contains(s, "beta") {
			sawDup = true
		}
	}
	if !sawBuiltin || !sawDup {
		t.Errorf("refusals = %v", refusals)
	}
}

func TestStatuses(t *testing.T) {
	cfg, _ := fakeServer(t, "fake", fakemcp.ModeStderrChatter)
	cfg = withEnv(cfg, "API_TOKEN", "${env:API_TOKEN}")
	off := mcpconfig.ServerConfig{Name: "playwright", Command: "npx", Enabled: false, DisabledHint: "set PLAYWRIGHT_ENABLED=true"}
	h := newHarness(t, []string{"API_TOKEN=tok_0123456789abcdef"}, cfg, off)
	s := h.session("")
	if got := statusOf(t, s, "fake"); !got.Discovering {
		t.Errorf("/mcp during the first discovery: %+v", got)
	}
	h.client.Discover(context.Background()) // /mcp does not wait for it

	if got := statusOf(t, s, "fake"); got.Discovering || got.State != chat.ServerNotStarted || !got.Enabled || len(got.Offered) == 0 {
		t.Errorf("/mcp before a call: %+v", got)
	}
	if got := statusOf(t, s, "playwright"); got.Enabled || got.DisabledHint != "set PLAYWRIGHT_ENABLED=true" {
		t.Errorf("/mcp before a call: %+v", got)
	}
	h.call(s, h.tool("fake", fakemcp.ToolEcho), `{"text":"x"}`)
	if got := statusOf(t, s, "fake"); got.State != chat.ServerRunning {
		t.Errorf("/mcp after a call: %+v", got)
	}
	// The server wrote its line before it answered, but on stderr, which
	// its own reader takes in: /mcp shows what was taken in so far.
	var detail chat.ServerStatus
	testkit.WaitFor(t, "the call's stderr line in /mcp fake", 10*time.Second, func() bool {
		detail = detailOf(t, s, "fake")
		return slices.ContainsFunc(detail.Tail, func(l string) bool { return strings.Contains(l, "fake: call echo") })
	})
	if detail.State != chat.ServerRunning || detail.Setup.Command == "" || !slices.Equal(detail.Setup.Env, []string{"API_TOKEN", "FAKE_MCP_LOG", "FAKE_MCP_MODE"}) ||
		detail.Info.Name != "fake" || detail.Info.Version != "1.0.0" || !slices.Contains(toolNames(detail.Offered), "echo") ||
		len(detail.Tail) == 0 || !strings.HasPrefix(detail.Tail[0], "fake: starting pid=") {
		t.Errorf("/mcp fake: %+v", detail)
	}
	if text := fmt.Sprintf("%+v", detail); strings.Contains(text, "tok_0123456789abcdef") || strings.Contains(text, "${env:API_TOKEN}") {
		t.Errorf("/mcp fake shows an env value: %s", text)
	}
	var unknown *chat.UnknownServerError
	if _, err := s.ServerStatus("nope"); !errors.As(err, &unknown) || !slices.Equal(unknown.Configured, []string{"fake", "playwright"}) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestStartFailureIsReported(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	tool := h.tool("fake", fakemcp.ToolEcho)
	s := h.session(filepath.Join(t.TempDir(), "missing", "workspace"))
	res := h.call(s, tool, `{}`)
	if !res.IsError || !strings.Contains(res.Text(), "fake") {
		t.Errorf("result = %+v", res)
	}
	if st, _ := s.Status("fake"); st.State != StateFailed || st.LastErr == "" {
		t.Errorf("status = %+v", st)
	}
}
