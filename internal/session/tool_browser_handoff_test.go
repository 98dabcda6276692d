package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// handingChat is a Chat that shows hand-offs with show.
type handingChat struct {
	Chat
	show func(ctx context.Context, p HandoffPrompt) (HandoffOutcome, error)
}

func (c handingChat) ShowHandoff(ctx context.Context, _ chat.Place, p HandoffPrompt) (HandoffOutcome, error) {
	return c.show(ctx, p)
}

// fakeHandoffs begins fakeLive hand-offs and records the requests.
type fakeHandoffs struct {
	mu   sync.Mutex
	reqs []HandoffRequest
	err  error
	live *fakeLive
}

func (f *fakeHandoffs) Begin(_ context.Context, req HandoffRequest) (LiveHandoff, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	f.live = &fakeLive{done: make(chan struct{})}
	return f.live, nil
}

func (f *fakeHandoffs) current() *fakeLive {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live
}

type fakeLive struct {
	once    sync.Once
	done    chan struct{}
	outcome HandoffOutcome
}

func (l *fakeLive) URL() string             { return "https://bot.test/live/t/x" }
func (l *fakeLive) Relink() string          { return "https://bot.test/live/t/y" }
func (l *fakeLive) Done() <-chan struct{}   { return l.done }
func (l *fakeLive) Outcome() HandoffOutcome { return l.outcome }
func (l *fakeLive) End(o HandoffOutcome)    { l.once.Do(func() { l.outcome = o; close(l.done) }) }
func (l *fakeLive) ended() (HandoffOutcome, bool) {
	select {
	case <-l.done:
		return l.outcome, true
	default:
		return 0, false
	}
}

// handoffModel calls browser_handoff, then says the result; and lists the
// tools it was offered.
func handoffModel(tools *[]string, mu *sync.Mutex) func(context.Context, llm.Request) (llm.Response, error) {
	return func(_ context.Context, req llm.Request) (llm.Response, error) {
		mu.Lock()
		*tools = (*tools)[:0]
		for _, t := range req.Tools {
			*tools = append(*tools, t.Name)
		}
		mu.Unlock()
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "result: " + res[0].Content[0].Text}, nil
		}
		if !strings.Contains(fmtTools(req.Tools), BrowserHandoffToolName) {
			return llm.Response{Text: "no hand-off offered"}, nil
		}
		return toolCall("h1", BrowserHandoffToolName, `{"reason":"Solve the CAPTCHA, token sk-handoff-secret-123"}`), nil
	}
}

func fmtTools(ts []llm.Tool) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Name + " ")
	}
	return b.String()
}

// browser_handoff is offered only with a live view (Handoffs) and a chat
// that can show it; the turn's user, the place and the redacted reason go
// to them; the result says how it ended and asks for a snapshot.
func TestBrowserHandoffTool(t *testing.T) {
	cases := []struct {
		name    string
		place   chat.Place
		begin   error
		noShow  bool
		noLive  bool
		outcome HandoffOutcome
		result  string
	}{
		{"done in a private chat", chat.In(1), nil, false, false, HandoffDone, "The user finished in the browser and pressed Done. Take a snapshot"},
		{"timeout in a group topic", chat.Place{Chat: -5, Topic: 7}, nil, false, false, HandoffTimeout, "did not press Done within 10 minutes"},
		{"stopped", chat.In(1), nil, false, false, HandoffStopped, "the hand-off was stopped"},
		{"not begun", chat.In(1), errors.New("too many"), false, false, 0, "could not be started"},
		{"no live view", chat.In(1), nil, false, true, 0, "no hand-off offered"},
		{"a chat that cannot show it", chat.In(1), nil, true, false, 0, "no hand-off offered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var tools []string
			h := &fakeHandoffs{err: tc.begin}
			var prompts []HandoffPrompt
			o := envOptions{handoffs: h, secrets: []string{"sk-handoff-secret-123"}}
			if tc.noLive {
				o.handoffs = nil
			}
			if !tc.noShow {
				o.showHandoff = func(_ context.Context, p HandoffPrompt) (HandoffOutcome, error) {
					mu.Lock()
					prompts = append(prompts, p)
					mu.Unlock()
					p.Live.End(tc.outcome)
					return p.Live.Outcome(), nil
				}
			}
			e := newEnv(t, handoffModel(&tools, &mu), o)
			if err := e.manager.Deliver(tc.place, Message{Text: "log in", From: 42}); err != nil {
				t.Fatal(err)
			}
			if got := e.chat.waitTexts(t, tc.place, 1); !strings.Contains(got[0], tc.result) {
				t.Fatalf("the model was told %q, want %q", got[0], tc.result)
			}
			mu.Lock()
			defer mu.Unlock()
			offered := slices.Contains(tools, BrowserHandoffToolName)
			if offered == (tc.noLive || tc.noShow) {
				t.Errorf("offered %v with a live view %v and a chat that shows it %v", offered, !tc.noLive, !tc.noShow)
			}
			if tc.noLive || tc.noShow || tc.begin != nil {
				return
			}
			req := h.reqs[0]
			if req.Place != tc.place || req.UserID != 42 || req.Timeout != DefaultHandoffTimeout || req.MCP == nil {
				t.Errorf("request %+v", req)
			}
			p := prompts[0]
			if p.UserID != 42 || strings.Contains(p.Reason, "sk-handoff-secret-123") || !strings.HasPrefix(p.Reason, "Solve the CAPTCHA") {
				t.Errorf("prompt %+v", p)
			}
			if o, ended := h.current().ended(); !ended || o != tc.outcome {
				t.Errorf("the hand-off ended %v %v", o, ended)
			}
		})
	}
}

// A turn stopped while the hand-off waits ends it (stopped), and the chat's
// wait with it.
func TestBrowserHandoffStopEndsIt(t *testing.T) {
	var mu sync.Mutex
	var tools []string
	h := &fakeHandoffs{}
	shown := make(chan struct{})
	e := newEnv(t, handoffModel(&tools, &mu), envOptions{handoffs: h,
		showHandoff: func(ctx context.Context, p HandoffPrompt) (HandoffOutcome, error) {
			close(shown)
			<-ctx.Done() // as the bot: the turn's end ends it
			p.Live.End(HandoffStopped)
			return HandoffStopped, nil
		}})
	if err := e.manager.Deliver(chat.In(1), Message{Text: "log in", From: 42}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-shown:
	case <-time.After(20 * time.Second):
		t.Fatal("the hand-off was never shown")
	}
	if !e.manager.Stop(chat.In(1)) {
		t.Fatal("nothing to stop")
	}
	testkit.WaitFor(t, "the hand-off's end on /stop", 20*time.Second, func() bool {
		_, ended := h.current().ended()
		return ended
	})
	if o, _ := h.current().ended(); o != HandoffStopped {
		t.Fatalf("ended %v", o)
	}
}
