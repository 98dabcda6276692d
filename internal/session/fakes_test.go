package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

func TestMain(m *testing.M) {
	fakemcp.MainIfRequested()
	os.Exit(m.Run())
}

// fakeChat records what a session sends.
type fakeChat struct {
	mu         sync.Mutex
	texts      map[chat.Place][]string
	files      map[chat.Place][]string
	contents   map[chat.Place][]string // what SendFile read of each file
	toolCalls  map[chat.Place][]string
	notices    map[chat.Place][]string // NoticeActivity.Notice
	activities int
	changed    chan struct{}
	// panicOnSend makes SendFile panic, as a bug in the chat port would.
	panicOnSend atomic.Bool
	// holdTexts, when set, holds every text to that chat until release
	// is closed or the sender's context ends (Telegram slow or
	// unreachable while the bot shuts down), and says so on held.
	holdTexts atomic.Pointer[chat.Place]
	held      chan struct{}
	release   chan struct{}
	// heldSent is how many parts of a held text the chat says went out
	// before the sender's context ended (chat.PartlySentError).
	heldSent atomic.Int64
}

func newFakeChat() *fakeChat {
	return &fakeChat{texts: map[chat.Place][]string{}, files: map[chat.Place][]string{}, contents: map[chat.Place][]string{},
		toolCalls: map[chat.Place][]string{}, notices: map[chat.Place][]string{},
		changed: make(chan struct{}, 1), held: make(chan struct{}, 1),
		release: make(chan struct{})}
}

func (c *fakeChat) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *fakeChat) SendText(ctx context.Context, place chat.Place, text string) error {
	if p := c.holdTexts.Load(); p != nil && place == *p {
		c.held <- struct{}{}
		select {
		case <-c.release:
		case <-ctx.Done():
			if n := c.heldSent.Load(); n > 0 {
				return &chat.PartlySentError{Sent: int(n), Err: ctx.Err()}
			}
			return ctx.Err()
		}
	}
	c.mu.Lock()
	c.texts[place] = append(c.texts[place], text)
	c.mu.Unlock()
	c.notify()
	return nil
}

// SendTextFrom records the rest of a text as "[from <n>] <text>".
func (c *fakeChat) SendTextFrom(ctx context.Context, place chat.Place, text string, from int) error {
	return c.SendText(ctx, place, fmt.Sprintf("[from %d] %s", from, text))
}

func (c *fakeChat) SendFile(_ context.Context, place chat.Place, file OutgoingFile, caption string) error {
	if c.panicOnSend.Load() {
		panic("the chat port blew up")
	}
	data, err := io.ReadAll(io.NewSectionReader(file.Content, 0, file.Size)) // as the bot reads it
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.files[place] = append(c.files[place], file.Name+"|"+caption)
	c.contents[place] = append(c.contents[place], string(data))
	c.mu.Unlock()
	c.notify()
	return nil
}

func (c *fakeChat) StartActivity(_ context.Context, place chat.Place) Activity {
	c.mu.Lock()
	c.activities++
	c.mu.Unlock()
	return &fakeActivity{c: c, place: place}
}

type fakeActivity struct {
	c     *fakeChat
	place chat.Place
}

func (a *fakeActivity) ToolCall(name string, _ json.RawMessage) {
	a.c.mu.Lock()
	a.c.toolCalls[a.place] = append(a.c.toolCalls[a.place], name)
	a.c.mu.Unlock()
}

func (a *fakeActivity) Notice(text string) {
	a.c.mu.Lock()
	a.c.notices[a.place] = append(a.c.notices[a.place], text)
	a.c.mu.Unlock()
}

func (a *fakeActivity) Done() {}

func (c *fakeChat) Notices(place chat.Place) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.notices[place]...)
}

func (c *fakeChat) Texts(place chat.Place) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.texts[place]...)
}

func (c *fakeChat) Contents(place chat.Place) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.contents[place]...)
}

func (c *fakeChat) Files(place chat.Place) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.files[place]...)
}

// waitTexts waits until chat has at least n texts.
func (c *fakeChat) waitTexts(t *testing.T, place chat.Place, n int) []string {
	t.Helper()
	got, err := c.awaitTexts(place, n)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// awaitTexts is waitTexts for goroutines other than the test's: it
// returns an error instead of failing the test.
func (c *fakeChat) awaitTexts(place chat.Place, n int) ([]string, error) {
	deadline := time.After(20 * time.Second)
	for {
		if got := c.Texts(place); len(got) >= n {
			return got, nil
		}
		select {
		case <-c.changed:
		case <-time.After(20 * time.Millisecond): // changed holds one token for every chat
		case <-deadline:
			return nil, fmt.Errorf("chat %v: timed out waiting for %d texts, have %q", place, n, c.Texts(place))
		}
	}
}

// approvingChat is a fakeChat that asks approve about tool calls.
type approvingChat struct {
	*fakeChat
	approve func(ctx context.Context, req ApprovalRequest) (Approval, error)
}

func (c approvingChat) Approve(ctx context.Context, _ chat.Place, req ApprovalRequest) (Approval, error) {
	return c.approve(ctx, req)
}

// askingChat is a fakeChat that answers the model's questions with ask.
type askingChat struct {
	Chat
	ask func(ctx context.Context, q UserQuestion) (UserAnswer, error)
}

func (c askingChat) AskUser(ctx context.Context, _ chat.Place, q UserQuestion) (UserAnswer, error) {
	return c.ask(ctx, q)
}

// elicitingChat is a fakeChat that answers the servers' questions with
// elicit.
type elicitingChat struct {
	*fakeChat
	elicit func(ctx context.Context, req ElicitRequest) (chat.ElicitResult, error)
}

func (c elicitingChat) Elicit(ctx context.Context, _ chat.Place, req ElicitRequest) (chat.ElicitResult, error) {
	return c.elicit(ctx, req)
}

// scriptModel answers with a function of the request and records requests.
type scriptModel struct {
	mu       sync.Mutex
	requests []llm.Request
	answer   func(ctx context.Context, req llm.Request) (llm.Response, error)
}

func (m *scriptModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	return m.answer(ctx, req)
}

func (m *scriptModel) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.requests...)
}

func toolCall(id, name, args string) llm.Response {
	return llm.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}}
}

// env is a session manager over the fake MCP server.
type env struct {
	t       *testing.T
	dataDir string
	chat    *fakeChat
	model   *scriptModel
	mcp     *mcpclient.Client
	manager *Manager
	secrets *redact.Registry
	mcpLog  string
}

type envOptions struct {
	modes         []string
	maxSteps      int
	dataDir       string
	secrets       []string
	host          []string
	idleRelease   time.Duration
	answerGrace   time.Duration
	contextTokens int
	modelTimeout  time.Duration
	toolSearch    ToolSearch
	sampling      bool         // the fake's entry says "sampling": true
	logger        *slog.Logger // default: discard
	// server edits the fake server's configuration.
	server func(*mcpconfig.ServerConfig)
	// approve, when set, makes the chat an Approver that decides so.
	approve         func(ctx context.Context, req ApprovalRequest) (Approval, error)
	approvalTimeout time.Duration
	// elicit, when set, makes the chat an Elicitor that answers so.
	elicit    func(ctx context.Context, req ElicitRequest) (chat.ElicitResult, error)
	allowance Allowance
	// streams makes the chat's activities StreamingActivities that record
	// into it; noStream is Options.NoStream.
	streams  *streamLog
	noStream bool
	// discoveryWait is Options.DiscoveryWait; 0: a minute, so that the
	// first message sees the fake's tools however loaded the machine.
	discoveryWait time.Duration
	// diskBudget and diskCheckEvery are Options.DiskBudget and
	// DiskCheckEvery.
	diskBudget     int64
	diskCheckEvery time.Duration
	// models is Options.Models.
	models []string
	// askUser, when set, makes the chat a UserAsker that answers so.
	askUser func(ctx context.Context, q UserQuestion) (UserAnswer, error)
	// voice makes the chat a VoiceChat that records an answer read aloud
	// as "🔊 <answer>"; voiceDefault is Options.VoiceDefault.
	voice, voiceDefault bool
	// documents is Options.Documents.
	documents DocumentReader
	// handoffs is Options.Handoffs; showHandoff, when set, makes the chat a
	// HandoffChat that shows hand-offs so.
	handoffs    Handoffs
	showHandoff func(ctx context.Context, p HandoffPrompt) (HandoffOutcome, error)
	// maxTokensPerRun is Options.MaxTokensPerRun.
	maxTokensPerRun int
	// now is Options.Now (nil: the clock).
	now func() time.Time
	// diskFree is Options.DiskFree (nil: the file system's).
	diskFree func(dir string) (int64, error)
}

// voicingChat reads answers aloud into the fake chat's texts.
type voicingChat struct {
	Chat
	c *fakeChat
}

func (v voicingChat) SendVoiceAnswer(ctx context.Context, place chat.Place, markdown string) error {
	return v.c.SendText(ctx, place, "🔊 "+markdown)
}

func newEnv(t *testing.T, answer func(ctx context.Context, req llm.Request) (llm.Response, error), o envOptions) *env {
	t.Helper()
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	logPath := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(o.modes...).WithLog(logPath)
	cfg := mcpconfig.ServerConfig{Name: "fake", Source: mcpconfig.SourceConfig, Command: l.Command, Env: l.EnvRefs(),
		Enabled: true, StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, StderrLevel: slog.LevelDebug,
		PromptSection: "## Fake\nThe fake tools are for tests.", Sampling: o.sampling}
	if o.server != nil {
		o.server(&cfg)
	}
	filter := redact.NewEnvFilter(append(os.Environ(), o.host...))
	secrets := redact.NewRegistry()
	secrets.Add(filter.Secrets()...)
	secrets.Add(o.secrets...)
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := mcpclient.New(mcpclient.Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: filter,
		Redactor: secrets, Logger: logger, Builtins: []string{SendToolName}})
	chat := newFakeChat()
	var port Chat = chat
	if o.approve != nil {
		port = approvingChat{chat, o.approve}
	}
	if o.elicit != nil {
		port = elicitingChat{chat, o.elicit}
	}
	if o.streams != nil {
		port = streamingChat{port, o.streams}
	}
	if o.voice {
		port = voicingChat{port, chat}
	}
	if o.askUser != nil {
		port = askingChat{port, o.askUser}
	}
	if o.showHandoff != nil {
		port = handingChat{port, o.showHandoff}
	}
	model := &scriptModel{answer: answer}
	if o.discoveryWait == 0 {
		o.discoveryWait = time.Minute
	}
	m := NewManager(Options{DiscoveryWait: o.discoveryWait, DataDir: o.dataDir, Model: model, ModelName: "script-model", MCP: client, NewMCPSession: mcpSessions(client), Chat: port, Redactor: secrets,
		Logger: logger, MaxSteps: o.maxSteps, IdleRelease: o.idleRelease, AnswerGrace: o.answerGrace, ContextTokens: o.contextTokens, ModelTimeout: o.modelTimeout, ToolSearch: o.toolSearch,
		ApprovalTimeout: o.approvalTimeout, Allowance: o.allowance, NoStream: o.noStream,
		DiskBudget: o.diskBudget, DiskCheckEvery: o.diskCheckEvery, Models: o.models, VoiceDefault: o.voiceDefault, Documents: o.documents, Handoffs: o.handoffs,
		MaxTokensPerRun: o.maxTokensPerRun, Now: o.now, DiskFree: o.diskFree})
	e := &env{t: t, dataDir: o.dataDir, chat: chat, model: model, mcp: client, manager: m, secrets: secrets, mcpLog: logPath}
	t.Cleanup(func() { e.close() })
	return e
}

func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.manager.Close(ctx); err != nil {
		e.t.Errorf("close: %v", err)
	}
}

func (e *env) deliver(place chat.Place, text string) {
	e.t.Helper()
	if err := e.manager.Deliver(place, Message{Text: text}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) mcpPID(place chat.Place) int {
	ms, err := e.manager.MCP(place)
	if err != nil {
		e.t.Fatal(err)
	}
	st, _ := ms.(*mcpclient.Session).Status("fake")
	return st.PID
}

// mcpSessions makes the chats' MCP sessions of client (as cmd/volcanicbot
// wires them).
func mcpSessions(client *mcpclient.Client) func(workspace, private string) (MCPSession, error) {
	return func(workspace, private string) (MCPSession, error) {
		s, err := client.NewSession(workspace, private)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

func pidGone(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}

// gateHandler is a slog handler that holds up the goroutine logging a
// record whose message contains match until open is closed, and says so on
// held. Every other record is dropped.
type gateHandler struct {
	match string
	held  chan struct{} // one token per held record (buffered by the test)
	open  chan struct{}
}

func (h *gateHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *gateHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *gateHandler) WithGroup(string) slog.Handler            { return h }

func (h *gateHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.match) {
		h.held <- struct{}{}
		<-h.open
	}
	return nil
}

// inChat is chat.In for the tests whose chat id is a variable named chat.
func inChat(id int64) chat.Place { return chat.In(id) }
