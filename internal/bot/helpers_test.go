package bot

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

var (
	_ Sessions     = (*session.Manager)(nil)
	_ session.Chat = (*Chat)(nil)
)

const waitLong = 20 * time.Second // a deadline for events, generous for a loaded CI machine

// fakeSessions records the calls the bot makes.
type fakeSessions struct {
	mu      sync.Mutex
	calls   []string // "deliver 5 hello", "reset 5", "stop 5", "mcp 5 name", "restart 5 name"
	changed chan struct{}

	files   []session.Attachment // every file delivered
	servers []string
	running bool                                   // what Stop reports
	onCall  func(ctx context.Context, call string) // runs before the call returns (may block or panic)
	// mcpStatus answers /mcp (nil: one server, fetch, disabled), mcpServer
	// /mcp <name> (nil: that server, disabled, run by "cmd").
	mcpStatus  func(ctx context.Context, chatID chat.Place) (chat.MCPStatus, error)
	mcpServer  func(ctx context.Context, chatID chat.Place, name string) (chat.ServerStatus, error)
	resetErr   error
	restartErr error
	// mcpLogin, when set, starts the logins (a real client's, in a test
	// of what the chat sees of a login).
	mcpLogin func(ctx context.Context, name, redirect string) (*session.MCPLogin, error)
	// holdTaken leaves delivered messages untaken (a turn runs before
	// them); otherwise Deliver takes them at once.
	holdTaken bool
	// grants are the chats' "Always in this chat"; grantsErr fails every
	// call about them.
	grants    map[chat.Place][]session.Grant
	grantsErr error
	// modelList are the models offered (nil: one, "test-model"), picks
	// each chat's pick (cmd_model_test.go).
	modelList []string
	picks     map[chat.Place]string
	// memory are the chats' notes; memoryErr fails every read of them.
	memory    map[chat.Place][]session.MemoryEntry
	memoryErr error
	// voice are the chats' /voice choices.
	voice map[chat.Place]bool
	// zones are the chats' /tz.
	zones map[int64]string
}

func newFakeSessions() *fakeSessions {
	return &fakeSessions{changed: make(chan struct{}), servers: []string{"playwright", "fetch"}, grants: map[chat.Place][]session.Grant{},
		memory: map[chat.Place][]session.MemoryEntry{}}
}

func (s *fakeSessions) record(ctx context.Context, call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	close(s.changed)
	s.changed = make(chan struct{})
	hook := s.onCall
	s.mu.Unlock()
	if hook != nil {
		hook(ctx, call)
	}
}

func (s *fakeSessions) Deliver(chatID chat.Place, msg session.Message) error {
	call := fmt.Sprintf("deliver %v %s", chatID, msg.Text)
	for _, f := range msg.Files {
		call += fmt.Sprintf(" +file %q %s %d", f.Name, f.MIMEType, len(f.Data))
	}
	s.mu.Lock()
	s.files = append(s.files, msg.Files...)
	hold := s.holdTaken
	s.mu.Unlock()
	s.record(context.Background(), call)
	if !hold && msg.Taken != nil {
		msg.Taken() // the session took it at once
	}
	return nil
}

func (s *fakeSessions) End(place chat.Place) bool {
	s.record(context.Background(), fmt.Sprintf("end %v", place))
	return true
}

func (s *fakeSessions) Stop(chatID chat.Place) bool {
	s.record(context.Background(), fmt.Sprintf("stop %v", chatID))
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

func (s *fakeSessions) Reset(ctx context.Context, chatID chat.Place) error {
	s.record(ctx, fmt.Sprintf("reset %v", chatID))
	return s.resetErr
}

func (s *fakeSessions) MCPStatus(ctx context.Context, chatID chat.Place) (chat.MCPStatus, error) {
	s.record(ctx, fmt.Sprintf("mcp %v", chatID))
	if s.mcpStatus != nil {
		return s.mcpStatus(ctx, chatID)
	}
	return chat.MCPStatus{Servers: []chat.ServerStatus{{Name: "fetch", Display: "fetch", Ref: "fetch"}}}, nil
}

func (s *fakeSessions) MCPServer(ctx context.Context, chatID chat.Place, name string) (chat.ServerStatus, error) {
	s.record(ctx, fmt.Sprintf("mcp %v %s", chatID, name))
	if s.mcpServer != nil {
		return s.mcpServer(ctx, chatID, name)
	}
	return chat.ServerStatus{Name: name, Display: name, Ref: name,
		ServerDetails: chat.ServerDetails{Setup: chat.ServerSetup{Command: "cmd", Source: "test", Approval: "never"}}}, nil
}

func (s *fakeSessions) MCPRestart(chatID chat.Place, name string) error {
	s.record(context.Background(), fmt.Sprintf("restart %v %s", chatID, name))
	return s.restartErr
}

func (s *fakeSessions) MCPLogin(ctx context.Context, name, redirect string) (*session.MCPLogin, error) {
	call := "login " + name
	if redirect != "" {
		call += " " + redirect
	}
	s.record(ctx, call)
	s.mu.Lock()
	login := s.mcpLogin
	s.mu.Unlock()
	if login != nil {
		return login(ctx, name, redirect)
	}
	if name != "remote" {
		return nil, fmt.Errorf("%s is not a server at a URL: it has no login", name)
	}
	return session.NewMCPLogin("https://auth.example/authorize?state=s1", "s1", func(ctx context.Context, answer string) error {
		s.record(ctx, "finish "+answer)
		if !strings.Contains(answer, "code=") {
			return &mcpclient.LoginError{Server: "remote", Reason: fmt.Sprintf("no code in %q", answer)}
		}
		return nil
	}), nil
}

func (s *fakeSessions) ServerNames() []string { return s.servers }

func (s *fakeSessions) Grants(chatID chat.Place) ([]session.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grantsErr != nil {
		return nil, s.grantsErr
	}
	return slices.Clone(s.grants[chatID]), nil
}

func (s *fakeSessions) RevokeGrant(chatID chat.Place, server, tool string) (bool, error) {
	s.record(context.Background(), fmt.Sprintf("revoke %v %s %s", chatID, server, tool))
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.grants[chatID])
	s.grants[chatID] = slices.DeleteFunc(s.grants[chatID], func(g session.Grant) bool { return g.Server == server && g.Tool == tool })
	return len(s.grants[chatID]) < n, s.grantsErr
}

func (s *fakeSessions) RevokeGrants(chatID chat.Place) (int, error) {
	s.record(context.Background(), fmt.Sprintf("revoke all %v", chatID))
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.grants[chatID])
	delete(s.grants, chatID)
	return n, s.grantsErr
}

func (s *fakeSessions) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// callsWith returns the calls starting with prefix.
func (s *fakeSessions) callsWith(prefix string) []string {
	var out []string
	for _, c := range s.Calls() {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// waitCalls waits until n calls start with prefix.
func (s *fakeSessions) waitCalls(t *testing.T, prefix string, n int) []string {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		got := s.callsWith(prefix)
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d calls %q, want %d; all calls: %q", len(got), prefix, n, s.Calls())
		}
	}
}

// sleeps records the retry waits and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

// Users and chats of the tests.
const (
	alice    = 1001 // allowed
	bob      = 1002 // allowed
	stranger = 6666
	group    = int64(-1001234567890)
)

// tgOptions are the options of the bot's Telegram client.
type tgOptions = telegram.Options

// testOptions are a test's options for the bot and its Telegram client.
type testOptions struct {
	Options
	tgOptions
}

// newTestBot builds o's Telegram client and the bot on it.
func newTestBot(t testing.TB, o testOptions) (*telegram.Client, *Bot) {
	t.Helper()
	tg, err := telegram.New(o.tgOptions)
	if err != nil {
		t.Fatal(err)
	}
	o.Options.Telegram = tg
	b, err := New(o.Options)
	if err != nil {
		t.Fatal(err)
	}
	return tg, b
}

type harness struct {
	fake   *telegramtest.Fake
	tg     *telegram.Client
	bot    *Bot
	sess   *fakeSessions
	sleeps *sleeps
	logs   *testkit.SyncBuffer
}

// newBot builds a Bot against a fresh fake, without running it.
func newBot(t *testing.T, edit func(*testOptions)) *harness {
	t.Helper()
	return buildBot(t, telegramtest.New(t), edit)
}

// newBubbleBot is newBot for a test inside a testing/synctest bubble: the
// fake answers in process, so nothing blocks on a socket and the bubble's
// clock advances whenever every goroutine waits.
func newBubbleBot(t *testing.T, edit func(*testOptions)) *harness {
	t.Helper()
	fake := telegramtest.NewInProcess(t)
	return buildBot(t, fake, func(o *testOptions) {
		o.HTTPClient = fake.Client()
		if edit != nil {
			edit(o)
		}
	})
}

func buildBot(t *testing.T, fake *telegramtest.Fake, edit func(*testOptions)) *harness {
	t.Helper()
	h := &harness{
		fake:   fake,
		sess:   newFakeSessions(),
		sleeps: &sleeps{},
		logs:   &testkit.SyncBuffer{},
	}
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := testOptions{
		Options:   Options{AllowedUsers: []int64{alice, bob}, Sessions: h.sess, Logger: logger},
		tgOptions: tgOptions{Token: h.fake.Token(), APIURL: h.fake.URL(), Logger: logger, Sleep: h.sleeps.sleep},
	}
	if edit != nil {
		edit(&o)
	}
	h.tg, h.bot = newTestBot(t, o)
	return h
}

// startBot runs a Bot against a fresh fake until the test ends, and
// returns once it polls.
func startBot(t *testing.T, edit func(*testOptions)) *harness {
	t.Helper()
	h := newBot(t, edit)
	h.startPolling(t)
	return h
}

// startBubbleBot is startBot inside a testing/synctest bubble.
func startBubbleBot(t *testing.T, edit func(*testOptions)) *harness {
	t.Helper()
	h := newBubbleBot(t, edit)
	h.startPolling(t)
	return h
}

// startPolling runs the bot until the test ends and returns once it
// polls. A message from another bot is ignored, but it ends the first long
// poll, and the second is asked for only after LastPoll was set.
func (h *harness) startPolling(t *testing.T) {
	t.Helper()
	h.run(t)
	m := h.fake.NewMessage(1, 1, "ping")
	m.From.IsBot = true
	h.fake.Send(updateOf(m))
	if _, err := h.fake.WaitFor("getUpdates", 2, waitLong); err != nil {
		t.Fatalf("bot is not polling: %v; log:\n%s", err, h.logs)
	}
	if h.tg.LastPoll().IsZero() {
		t.Fatal("polling, but LastPoll is not set")
	}
}

// run runs the bot until the returned stop is called (or the test ends).
func (h *harness) run(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.bot.Run(ctx) }()
	var stopped atomic.Bool
	stop = func() {
		if !stopped.CompareAndSwap(false, true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(waitLong):
			t.Error("Run did not return after cancel")
		}
		// The calls still queued for the chats (a question's closing
		// edit) end before the test does.
		if err := h.tg.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// texts waits until n messages were sent to chat and returns their texts.
func (h *harness) texts(t *testing.T, chatID int64, n int) []string {
	t.Helper()
	msgs, err := h.fake.WaitSent(chatID, n, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

func updateOf(m *models.Message) models.Update { return models.Update{Message: m} }

// replacer is a Redactor that replaces fixed strings.
type replacer struct{ r *strings.Replacer }

func (r replacer) Redact(s string) string { return r.r.Replace(s) }

func (s *fakeSessions) Memory(chatID chat.Place) ([]session.MemoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memoryErr != nil {
		return nil, s.memoryErr
	}
	return slices.Clone(s.memory[chatID]), nil
}

func (s *fakeSessions) ForgetMemory(chatID chat.Place, text string) (bool, error) {
	s.record(context.Background(), fmt.Sprintf("forget %v %s", chatID, text))
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.memory[chatID])
	s.memory[chatID] = slices.DeleteFunc(s.memory[chatID], func(e session.MemoryEntry) bool { return e.Text == text })
	return len(s.memory[chatID]) < n, s.memoryErr
}

func (s *fakeSessions) ClearMemory(chatID chat.Place) (int, error) {
	s.record(context.Background(), fmt.Sprintf("clear memory %v", chatID))
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.memory[chatID])
	delete(s.memory, chatID)
	return n, nil
}

func (s *fakeSessions) Voice(chatID chat.Place) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.voice[chatID], nil
}

func (s *fakeSessions) SetVoice(chatID chat.Place, on bool) error {
	s.record(context.Background(), fmt.Sprintf("voice %v %v", chatID, on))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.voice == nil {
		s.voice = map[chat.Place]bool{}
	}
	s.voice[chatID] = on
	return nil
}

func (s *fakeSessions) Zone(place chat.Place) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if z := s.zones[place.Chat]; z != "" {
		return z, nil
	}
	return "UTC", nil
}

func (s *fakeSessions) SetZone(place chat.Place, name string) error {
	s.record(context.Background(), fmt.Sprintf("tz %v %s", place, name))
	if _, err := (&schedule.Zones{}).Load(name); err != nil {
		return testZoneError(name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.zones == nil {
		s.zones = map[int64]string{}
	}
	s.zones[place.Chat] = name
	return nil
}

// testZoneError is SetZone's refusal, with its user message.
type testZoneError string

func (e testZoneError) Error() string       { return "unknown zone " + string(e) }
func (e testZoneError) UserMessage() string { return "There is no time zone " + string(e) + "." }

// inChat is chat.In for the tests whose chat id is a variable named chat.
func inChat(id int64) chat.Place { return chat.In(id) }
