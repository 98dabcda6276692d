package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The whole daemon in-process: the real Main against a fake Bot API, a
// fake model endpoint (OpenAI or Anthropic wire format, through the real
// adapters) and the fake MCP server.

const (
	alice = int64(100) // allowed; her private chat has the same id
	bob   = int64(200) // allowed
)

type daemon struct {
	t        testing.TB
	tg       *telegramtest.Fake
	model    *llmtest.Server
	dataDir  string
	mcpLog   string
	logs     *testkit.SyncBuffer
	environ  []string
	cancel   context.CancelFunc
	done     chan error
	provider string
}

type daemonOptions struct {
	provider string // openai (default) or anthropic
	dataDir  string
	tg       *telegramtest.Fake
	modes    []string
	extra    []string // more environment
	// webhook serves the bot on a local HTTP_ADDR and lets the fake post
	// updates there instead of answering long polls.
	webhook bool
	// webhookAddr is the webhook's HTTP_ADDR; "": a free one.
	webhookAddr string
	// servers are more mcpServers entries for settings.json.
	servers map[string]any
	// fake are more fields of the fake server's entry.
	fake map[string]any
	// main, when set, adjusts the Main before it runs.
	main func(*Main)
	// paced keeps Telegram's flood limits on both sides: the fake
	// enforces them and the bot paces its calls (one a second in a chat).
	// Otherwise neither does, so that tests do not wait a second for
	// every message.
	paced bool
}

// newTelegram is a fake Bot API that enforces no flood limits, for a
// daemon that is not paced.
func newTelegram(t testing.TB) *telegramtest.Fake {
	f := telegramtest.Start(telegramtest.Options{Limits: &telegramtest.NoLimits})
	t.Cleanup(f.Close)
	return f
}

// unpaced are flood limits that hold nothing back.
var unpaced = telegram.Limits{ChatEvery: time.Nanosecond, GroupPerMinute: 1 << 30, PerSecond: 1 << 30}

// modelReply decides the model's answer from what it was sent.
type modelReply func(req llmtest.Request) llmtest.Reply

func startDaemon(t testing.TB, reply modelReply, o daemonOptions) *daemon {
	t.Helper()
	if o.provider == "" {
		o.provider = "openai"
	}
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	switch {
	case o.tg != nil:
	case o.paced:
		o.tg = telegramtest.New(t)
	default:
		o.tg = newTelegram(t)
	}
	var model *llmtest.Server
	if o.provider == "anthropic" {
		model = llmtest.NewAnthropic(t)
	} else {
		model = llmtest.NewOpenAI(t)
	}
	for range 50 {
		model.Push(llmtest.Func(reply))
	}
	agentDir := t.TempDir()
	mcpLog := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(append(o.modes, fakemcp.ModeCountStarts)...).WithLog(mcpLog)
	fake := map[string]any{"command": l.Command, "env": l.Env, "startupTimeoutSeconds": 10}
	maps.Copy(fake, o.fake)
	servers := map[string]any{"fake": fake}
	maps.Copy(servers, o.servers)
	settings, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{
		"HOME=" + t.TempDir(),
		"PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + o.tg.Token(),
		"TELEGRAM_API_URL=" + o.tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d,%d", alice, bob),
		"VOLCANIC_DATA_DIR=" + o.dataDir,
		"VOLCANIC_AGENT_DIR=" + agentDir,
		"LLM_PROVIDER=" + o.provider,
		"LLM_MODEL=test-model",
		"OPENAI_API_KEY=sk-e2e-openai-0123456789",
		"OPENAI_BASE_URL=" + model.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-0123456789",
		"ANTHROPIC_BASE_URL=" + model.URL,
		"LOG_FORMAT=json",
		"LOG_LEVEL=debug",
	}
	if o.webhook {
		addr := o.webhookAddr
		if addr == "" {
			addr = freeAddr(t)
		}
		environ = append(environ, "HTTP_ADDR="+addr, "TELEGRAM_WEBHOOK_URL=http://"+addr+"/telegram/hook",
			"TELEGRAM_WEBHOOK_SECRET=e2e-webhook-secret_0123456789")
	}
	environ = append(environ, o.extra...)
	logs := &testkit.SyncBuffer{}
	m, err := NewMain(logs, environ)
	if err != nil {
		t.Fatal(err)
	}
	if !o.paced {
		m.TelegramLimits = unpaced
	}
	// The first message of a test must see the fake's tools even when a
	// loaded machine takes more than the turn's few seconds to discover
	// it (discoverywait_test.go runs the default).
	m.DiscoveryWait = time.Minute
	if o.main != nil {
		o.main(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{t: t, tg: o.tg, model: model, dataDir: o.dataDir, mcpLog: mcpLog, logs: logs, environ: environ, cancel: cancel,
		done: make(chan error, 1), provider: o.provider}
	go func() {
		err := m.Run(ctx)
		m.Close()
		d.done <- err
	}()
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	if o.webhook {
		if _, err := o.tg.WaitFor("setWebhook", 1, 10*time.Second); err != nil {
			t.Fatalf("the bot never set its webhook: %v\n%s", err, logs.String())
		}
		return d
	}
	if _, err := o.tg.WaitFor("getUpdates", 1, 10*time.Second); err != nil {
		t.Fatalf("the bot never polled: %v\n%s", err, logs.String())
	}
	return d
}

// freeAddr is a local address nothing listens on (for a moment).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// stop shuts the daemon down as SIGTERM would and waits for it.
func (d *daemon) stop() {
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		d.t.Error("the daemon did not stop within 10 s")
	}
}

func (d *daemon) waitSent(chat int64, n int) []telegramtest.Message {
	d.t.Helper()
	msgs, err := d.tg.WaitSent(chat, n, 20*time.Second)
	if err != nil {
		d.t.Fatalf("chat %d: %v; sent: %q", chat, err, d.tg.Texts(chat))
	}
	return msgs
}

// texts are the visible texts of the chat's messages that still exist
// (the progress message is deleted).
func (d *daemon) texts(chat int64) []string {
	var out []string
	for _, m := range d.tg.Sent(chat) {
		if !m.Deleted && m.Method == "sendMessage" {
			out = append(out, m.Text)
		}
	}
	return out
}

func (d *daemon) waitText(chat int64, substr string) {
	d.t.Helper()
	if err := d.tg.WaitUntil(func() bool {
		for _, s := range d.texts(chat) {
			if strings.Contains(s, substr) {
				return true
			}
		}
		return false
	}, 20*time.Second); err != nil {
		d.t.Fatalf("chat %d never got %q; got %q", chat, substr, d.texts(chat))
	}
}

// waitLog waits for a line of the daemon's log that contains substr.
func (d *daemon) waitLog(substr string) {
	d.t.Helper()
	testkit.WaitFor(d.t, fmt.Sprintf("the daemon to log %q", substr), 20*time.Second, func() bool {
		return strings.Contains(d.logs.String(), substr)
	})
}

// --- reading the model's requests in either wire format ---

// lastRole is the role of the last message of a wire request and whether
// it carries tool results.
func toolResultText(req llmtest.Request) (string, bool) {
	msgs, _ := req.JSON["messages"].([]any)
	if len(msgs) == 0 {
		return "", false
	}
	var out strings.Builder
	found := false
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		switch m["role"] {
		case "tool": // OpenAI
			found = true
			out.WriteString(fmt.Sprint(m["content"]))
			continue
		case "user":
			if blocks, ok := m["content"].([]any); ok {
				for _, b := range blocks {
					if bm, ok := b.(map[string]any); ok && bm["type"] == "tool_result" {
						found = true
						switch c := bm["content"].(type) {
						case string:
							out.WriteString(c)
						case []any:
							for _, part := range c {
								if pm, ok := part.(map[string]any); ok && pm["type"] == "text" {
									out.WriteString(fmt.Sprint(pm["text"]))
								}
							}
						}
					}
				}
			}
			if found || i < len(msgs)-1 {
				return out.String(), found
			}
			continue
		}
		return out.String(), found
	}
	return out.String(), found
}

func lastUserText(req llmtest.Request) string {
	msgs, _ := req.JSON["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		switch c := m["content"].(type) {
		case string:
			return c
		case []any:
			for j := len(c) - 1; j >= 0; j-- {
				if b, ok := c[j].(map[string]any); ok && b["type"] == "text" {
					return fmt.Sprint(b["text"])
				}
			}
		}
	}
	return ""
}

func call(name, args string) llmtest.Reply {
	return llmtest.ToolCalls(llm.ToolCall{ID: "call_" + name, Name: name, Arguments: json.RawMessage(args)})
}

// echoThenAnswer calls echo with the user's text, then reports the result.
func echoThenAnswer(req llmtest.Request) llmtest.Reply {
	if res, ok := toolResultText(req); ok {
		return llmtest.Text("the tool said: " + res)
	}
	return call("echo", fmt.Sprintf(`{"text":%q}`, lastUserText(req)))
}

func TestE2EMessageToolAnswer(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			d := startDaemon(t, echoThenAnswer, daemonOptions{provider: provider})
			d.tg.Message(alice, alice, "hello volcano")
			d.waitText(alice, "the tool said: hello volcano")
			if len(d.tg.RequestsFor("sendChatAction")) == 0 {
				t.Error("no typing action")
			}
			// The progress message listed the call and is removed (right
			// after the answer goes out).
			if err := d.tg.WaitUntil(func() bool { return progressRemoved(d.tg.Sent(alice), "echo") }, 20*time.Second); err != nil {
				t.Fatalf("no removed progress message naming echo: %+v", d.tg.Sent(alice))
			}
		})
	}
}

// progressRemoved reports whether a deleted message of msgs named tool.
func progressRemoved(msgs []telegramtest.Message, tool string) bool {
	for _, m := range msgs {
		if m.Deleted && strings.Contains(strings.Join(append(m.History, m.Text), "\n"), tool) {
			return true
		}
	}
	return false
}

func TestE2EStrangerCausesNothing(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{})
	const stranger = int64(999)
	d.tg.Message(stranger, stranger, "let me in")
	msgs := d.waitSent(stranger, 1)
	if !strings.Contains(msgs[0].Text, "999") {
		t.Errorf("refusal = %q", msgs[0].Text)
	}
	d.tg.Message(stranger, stranger, "please")
	d.waitLog("message dropped: refused already") // the bot is done with it
	if n := len(d.tg.Sent(stranger)); n != 1 {
		t.Errorf("%d replies to a stranger, want 1", n)
	}
	if n := len(d.model.Requests()); n != 0 {
		t.Errorf("%d model requests for a stranger", n)
	}
	if _, err := os.Stat(filepath.Join(d.dataDir, "chats", "999")); !os.IsNotExist(err) {
		t.Errorf("a workspace was made for a stranger: %v", err)
	}
}

func TestE2EMCPCommands(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{})
	d.waitLog("MCP catalogue ready") // before it, /mcp says the server is starting
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "fake: not started")
	d.tg.Message(alice, alice, "hi")
	d.waitText(alice, "the tool said: hi")
	d.tg.Message(alice, alice, "/mcp")
	d.waitText(alice, "fake: running")
	d.tg.Message(alice, alice, "/mcp fake")
	d.waitText(alice, "server: fake 1.0.0")
	before := len(fakemcp.Filter(fakemcp.ReadLog(t, d.mcpLog), fakemcp.EventStart))
	d.tg.Message(alice, alice, "/mcp restart fake")
	d.waitText(alice, "restarted")
	d.tg.Message(alice, alice, "again")
	d.waitText(alice, "the tool said: again")
	if after := len(fakemcp.Filter(fakemcp.ReadLog(t, d.mcpLog), fakemcp.EventStart)); after != before+1 {
		t.Errorf("starts %d → %d: the call after /mcp restart did not start a new process", before, after)
	}
	if n := len(d.model.Requests()); n != 4 {
		t.Errorf("%d model requests: /mcp must cost none", n)
	}
}

func TestE2EStopAndNew(t *testing.T) {
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if _, ok := toolResultText(req); !ok && lastUserText(req) == "slow please" {
			return call("slow", `{}`)
		}
		return echoThenAnswer(req)
	}, daemonOptions{modes: []string{fakemcp.ModeLogCalls}})
	d.tg.Message(alice, alice, "slow please")
	if calls := fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventCall, 1, 20*time.Second); calls[0].Tool != fakemcp.ToolSlow {
		t.Fatalf("calls %+v, want slow", calls)
	}
	d.tg.Message(alice, alice, "/stop") // the slow call runs in the chat's process
	d.waitText(alice, "Stopped.")
	fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventCancelled, 1, 5*time.Second)

	starts := fakemcp.Filter(fakemcp.ReadLog(t, d.mcpLog), fakemcp.EventStart)
	pid := starts[len(starts)-1].PID
	d.tg.Message(alice, alice, "/new")
	d.waitText(alice, "New conversation")
	if fakemcp.Alive(pid) {
		t.Errorf("the chat's MCP process %d survived /new", pid)
	}
	archived, _ := filepath.Glob(filepath.Join(d.dataDir, "private", fmt.Sprint(alice), "transcript-*.jsonl"))
	if len(archived) != 1 {
		t.Errorf("archived transcripts: %v", archived)
	}
	d.tg.Message(alice, alice, "fresh")
	d.waitText(alice, "the tool said: fresh")
	reqs := d.model.Requests()
	first := reqs[len(reqs)-2]
	if msgs, _ := first.JSON["messages"].([]any); len(msgs) > 2 { // (system +) the new message
		t.Errorf("the first request after /new carries %d messages", len(msgs))
	}
}

func TestE2ESendPhoto(t *testing.T) {
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("sent: " + res)
		}
		return call("send", `{"path":"shots/page.png","caption":"your page"}`)
	}, daemonOptions{})
	ws := filepath.Join(d.dataDir, "chats", fmt.Sprint(alice))
	if err := os.MkdirAll(filepath.Join(ws, "shots"), 0o700); err != nil {
		t.Fatal(err)
	}
	png := fakemcp.PNG1x1()
	if err := os.WriteFile(filepath.Join(ws, "shots", "page.png"), png, 0o600); err != nil {
		t.Fatal(err)
	}
	d.tg.Message(alice, alice, "send me the page")
	d.waitText(alice, "sent: ")
	photos := d.tg.RequestsFor("sendPhoto")
	if len(photos) != 1 {
		t.Fatalf("%d sendPhoto requests", len(photos))
	}
	f := photos[0].Files["photo"]
	if !bytes.Equal(f.Data, png) || photos[0].Params["caption"] != "your page" {
		t.Errorf("sendPhoto got %d bytes %q, caption %q", len(f.Data), f.Filename, photos[0].Params["caption"])
	}
}

func TestE2EToolImageReachesTheModel(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
				if _, ok := toolResultText(req); ok {
					return llmtest.Text("I see a tiny image")
				}
				return call("image", `{}`)
			}, daemonOptions{provider: provider})
			d.tg.Message(alice, alice, "look")
			d.waitText(alice, "tiny image")
			reqs := d.model.Requests()
			body := string(reqs[len(reqs)-1].Body)
			switch provider {
			case "openai":
				if !strings.Contains(body, `"image_url"`) || !strings.Contains(body, "data:image/png;base64,") {
					t.Errorf("no image part in the chat-completions request:\n%.2000s", body)
				}
			case "anthropic":
				if !strings.Contains(body, `"type":"image"`) || !strings.Contains(body, `"media_type":"image/png"`) {
					t.Errorf("no image block in the messages request:\n%.2000s", body)
				}
			}
		})
	}
}

// A photo sent in Telegram is downloaded, saved in the chat's workspace and
// shown to the model with its caption, in both wire formats.
func TestE2EUserPhotoReachesTheModel(t *testing.T) {
	var jpg bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
				return llmtest.Text("a black square")
			}, daemonOptions{provider: provider})
			d.tg.Photo(alice, alice, jpg.Bytes(), "what is in this picture?")
			d.waitText(alice, "a black square")
			body := string(d.model.Requests()[0].Body)
			for _, want := range []string{"what is in this picture?", "uploads/photo-"} {
				if !strings.Contains(body, want) {
					t.Errorf("request lacks %q:\n%.2000s", want, body)
				}
			}
			switch provider {
			case "openai":
				if !strings.Contains(body, "data:image/jpeg;base64,") {
					t.Errorf("no image part in the chat-completions request:\n%.2000s", body)
				}
			case "anthropic":
				if !strings.Contains(body, `"media_type":"image/jpeg"`) {
					t.Errorf("no image block in the messages request:\n%.2000s", body)
				}
			}
			saved, _ := filepath.Glob(filepath.Join(d.dataDir, "chats", fmt.Sprint(alice), "uploads", "photo-*.jpg"))
			if len(saved) != 1 {
				t.Errorf("saved photos: %v", saved)
			}
		})
	}
}

func TestE2ERestartContinuesTheConversation(t *testing.T) {
	dataDir := t.TempDir()
	tg := newTelegram(t)
	reply := func(req llmtest.Request) llmtest.Reply {
		msgs, _ := req.JSON["messages"].([]any)
		return llmtest.Text(fmt.Sprintf("I have %d messages", len(msgs)))
	}
	d := startDaemon(t, reply, daemonOptions{dataDir: dataDir, tg: tg})
	d.tg.Message(alice, alice, "remember: the password is volcano")
	d.waitText(alice, "I have 2 messages") // system + user
	d.stop()

	d2 := startDaemon(t, reply, daemonOptions{dataDir: dataDir, tg: tg})
	d2.tg.Message(alice, alice, "what is the password?")
	d2.waitText(alice, "I have 4 messages")
	body := string(d2.model.Requests()[0].Body)
	if !strings.Contains(body, "the password is volcano") {
		t.Errorf("the restarted bot lost the history:\n%.1000s", body)
	}
}

func TestE2ELongAnswerIsSplit(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the report.\n\n")
	for i := 0; b.Len() < 3000; i++ {
		fmt.Fprintf(&b, "Paragraph %d talks about volcanoes and their **eruptions** in some detail.\n\n", i)
	}
	b.WriteString("```go\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "fmt.Println(\"line %d of the program\")\n", i)
	}
	b.WriteString("```\n\n")
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "Closing remark %d.\n\n", i)
	}
	answer := b.String()
	const done = "that was all"
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if lastUserText(req) == "anything more?" {
			return llmtest.Text(done)
		}
		return llmtest.Text(answer)
	}, daemonOptions{})
	d.tg.Message(alice, alice, "write a lot")
	d.waitSent(alice, 2)
	// The chat's next turn starts once this one has ended: its answer comes
	// after everything the long answer sent.
	d.tg.Message(alice, alice, "anything more?")
	d.waitText(alice, done)
	texts := d.texts(alice)
	if len(texts) != 3 || texts[2] != done {
		t.Fatalf("%d messages, want the answer in 2 and %q: %q", len(texts), done, texts)
	}
	texts = texts[:2]
	for _, m := range d.tg.Sent(alice) {
		if m.ParseMode != "HTML" {
			t.Errorf("message sent without HTML: %q", m.ParseMode)
		}
	}
	code := 0
	for _, text := range texts {
		code += strings.Count(text, "line 0 of the program") + strings.Count(text, "line 29 of the program")
	}
	if code != 2 {
		t.Errorf("the code block was lost or duplicated across the split")
	}
}

func TestE2ETwoChatsAtOnce(t *testing.T) {
	d := startDaemon(t, echoThenAnswer, daemonOptions{})
	d.tg.Message(alice, alice, "from alice")
	d.tg.Message(bob, bob, "from bob")
	d.waitText(alice, "the tool said: from alice")
	d.waitText(bob, "the tool said: from bob")
	for _, s := range d.texts(alice) {
		if strings.Contains(s, "bob") {
			t.Errorf("alice got bob's answer: %q", s)
		}
	}
}

// buildBinary builds the bot as its users run it — without the race
// detector, whose shadow memory would count in measurements of the
// process — into a test's temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "volcanicbot")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binary
}
