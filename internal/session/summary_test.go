package session

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// rememberModel is a chat's model for long conversations: it summarises
// (keeping the sentences that say "Remember"), answers a question from
// what the request holds, and says "noted" to anything else. summary, when
// set, answers summary requests instead.
func rememberModel(summary func(ctx context.Context, req llm.Request) (llm.Response, error)) func(ctx context.Context, req llm.Request) (llm.Response, error) {
	keep := llmtest.Summariser(func(s string) bool { return strings.Contains(s, "Remember") })
	code := regexp.MustCompile(`locker code is (\d+)`)
	return func(ctx context.Context, req llm.Request) (llm.Response, error) {
		r := llmtest.Request{LLM: req}
		switch {
		case llmtest.AsksForSummary(r) && summary != nil:
			return summary(ctx, req)
		case llmtest.AsksForSummary(r):
			return llm.Response{Text: keep(r).Text}, nil
		case strings.HasSuffix(llmtest.LastUserText(req), "?"):
			if m := code.FindStringSubmatch(llmtest.PromptText(r)); m != nil {
				return llm.Response{Text: "Your locker code is " + m[1]}, nil
			}
			return llm.Response{Text: "I do not know."}, nil
		}
		return llm.Response{Text: "noted"}, nil
	}
}

// chatLong says the fact, then n messages of ~1,200 bytes, each answered.
func chatLong(t *testing.T, e *env, chat int64, n int) {
	t.Helper()
	e.deliver(inChat(chat), "Remember: my locker code is 4821.")
	for i := range n {
		e.deliver(inChat(chat), fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 100)))
	}
	e.chat.waitTexts(t, inChat(chat), n+1)
}

// summaryRequests are the requests of reqs that ask for a summary.
func summaryRequests(reqs []llm.Request) (n int) {
	for _, r := range reqs {
		if llmtest.AsksForSummary(llmtest.Request{LLM: r}) {
			n++
		}
	}
	return n
}

// A long chat is summarised: the summary request offers no tools, goes
// to the chat's model and holds the oldest turns; the requests after it start with the summary
// and leave those turns out; the chat is told once in the progress; the
// transcript keeps every message and the summary; the early fact is
// answered. After a restart the same summary heads the requests, and /new
// starts empty.
func TestLongChatIsSummarised(t *testing.T) {
	const limit = 4_000 // the system prompt and the fake's tools are ~1,100; a message ~300
	b := &budget{left: 1 << 30, refused: make(chan struct{}, 10)}
	e := newEnv(t, rememberModel(nil), envOptions{contextTokens: limit, allowance: b, models: []string{"small", "big"}})
	if _, err := e.manager.SetModel(chat.In(41), "big"); err != nil {
		t.Fatal(err)
	}
	chatLong(t, e, 41, 12)
	reqs := e.model.Requests()
	if n := summaryRequests(reqs); n != 1 {
		t.Fatalf("%d summary requests, want 1", n)
	}
	for _, r := range reqs {
		if r.Model != "big" {
			t.Fatalf("a request to %q, not the chat's model", r.Model)
		}
	}
	if n := len(b.all()); n != len(reqs) {
		t.Errorf("%d requests reserved and recorded of the allowance, %d made", n, len(reqs))
	}
	last := reqs[len(reqs)-1]
	if !llmtest.IsSummaryHead(last.Messages[0]) || !strings.Contains(llmtest.PromptText(llmtest.Request{LLM: last}), "Remember: my locker code is 4821.") {
		t.Fatalf("the last request does not start with the summary: %.300q", llmtest.PromptText(llmtest.Request{LLM: last}))
	}
	if text := llmtest.PromptText(llmtest.Request{LLM: last}); strings.Contains(text, "message 0:") || strings.Contains(text, "left out to fit") {
		t.Error("the last request holds a summarised message, or was trimmed")
	}
	if got := total(agent.EstimateText(last.System)+agent.EstimateTools(last.Tools), last.Messages); got > limit {
		t.Errorf("request of ~%d tokens, limit %d", got, limit)
	}
	if got := e.chat.Notices(chat.In(41)); len(got) != 1 || !strings.HasPrefix(got[0], "📝 summarised the earlier conversation (") {
		t.Errorf("notices %q, want one", got)
	}
	transcript, err := os.ReadFile(filepath.Join(e.manager.Private(chat.In(41)), transcriptName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(transcript), "message 0:") || strings.Count(string(transcript), `{"summary":`) != 1 {
		t.Error("the transcript lacks an early message or the summary")
	}

	e.deliver(chat.In(41), "What is my locker code?")
	if texts := e.chat.waitTexts(t, chat.In(41), 14); texts[13] != "Your locker code is 4821" {
		t.Errorf("answer %q", texts[13])
	}
	head := e.model.Requests()[len(e.model.Requests())-1].Messages[0]
	e.close()

	// After a restart: the same head, no new summary.
	e2 := newEnv(t, rememberModel(nil), envOptions{contextTokens: limit, dataDir: e.dataDir})
	e2.deliver(chat.In(41), "What is my locker code, again?")
	if texts := e2.chat.waitTexts(t, chat.In(41), 1); texts[0] != "Your locker code is 4821" {
		t.Errorf("after a restart: %q", texts[0])
	}
	reqs = e2.model.Requests()
	if len(reqs) != 1 || !llmtest.IsSummaryHead(reqs[0].Messages[0]) || reqs[0].Messages[0].Parts[0].Text != head.Parts[0].Text {
		t.Fatalf("after a restart, %d requests; head %+v", len(reqs), reqs[0].Messages[0])
	}

	// /new starts empty.
	if err := e2.manager.Reset(context.Background(), chat.In(41)); err != nil {
		t.Fatal(err)
	}
	e2.deliver(chat.In(41), "What is my locker code?")
	if texts := e2.chat.waitTexts(t, chat.In(41), 2); texts[1] != "I do not know." {
		t.Errorf("after /new: %q", texts[1])
	}
	if reqs := e2.model.Requests(); len(reqs[len(reqs)-1].Messages) != 1 {
		t.Errorf("after /new the request has %d messages", len(reqs[len(reqs)-1].Messages))
	}
}

// A summary that cannot be made — the model fails or times out, the
// allowance refuses it — leaves the conversation trimmed as before, with
// a warning; the transcript keeps every message and no summary.
func TestSummaryFailureFallsBackToTrimming(t *testing.T) {
	const limit = 4_000
	tests := []struct {
		name    string
		summary func(ctx context.Context, req llm.Request) (llm.Response, error)
		left    int // the allowance: tokens before the summary is refused
	}{
		{name: "model error", summary: func(context.Context, llm.Request) (llm.Response, error) {
			return llm.Response{}, &llm.Error{Provider: "script", Status: 500, Message: "down"}
		}},
		{name: "timeout", summary: func(ctx context.Context, _ llm.Request) (llm.Response, error) {
			<-ctx.Done()
			return llm.Response{}, &llm.Error{Provider: "script", Message: "timeout", Err: ctx.Err()}
		}},
		{name: "empty answer", summary: func(context.Context, llm.Request) (llm.Response, error) {
			return llm.Response{Text: " "}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &logRecorder{}
			e := newEnv(t, rememberModel(tt.summary), envOptions{contextTokens: limit, logger: slog.New(rec), modelTimeout: timeoutFor(tt.name)})
			chatLong(t, e, 42, 12)
			assertTrimmed(t, e, rec, 42)
		})
	}
}

// timeoutFor is the model timeout of a failure case: short for the
// timeout, the default otherwise.
func timeoutFor(name string) time.Duration {
	if name == "timeout" {
		return 200 * time.Millisecond
	}
	return 0
}

// assertTrimmed checks that chat's conversation was trimmed, not
// summarised, and said so in the log.
func assertTrimmed(t *testing.T, e *env, rec *logRecorder, chat int64) {
	t.Helper()
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1]
	text := llmtest.PromptText(llmtest.Request{LLM: last})
	if llmtest.IsSummaryHead(last.Messages[0]) || !strings.Contains(text, "left out to fit the context window") {
		t.Errorf("the last request is not trimmed: %.200q", text)
	}
	if rec.count("conversation not summarised: the request is trimmed instead") == 0 {
		t.Error("no warning in the log")
	}
	if len(e.chat.Notices(inChat(chat))) != 0 {
		t.Errorf("notices %q", e.chat.Notices(inChat(chat)))
	}
	transcript, err := os.ReadFile(filepath.Join(e.manager.Private(inChat(chat)), transcriptName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(transcript), "message 0:") || strings.Contains(string(transcript), `{"summary":`) {
		t.Error("the transcript lacks an early message, or holds a summary")
	}
}

// countedAllowance allows the first allow reservations and refuses the
// rest, telling the chat once; it counts both.
type countedAllowance struct {
	mu                       sync.Mutex
	allow, reserved, refused int
	told                     bool
}

func (a *countedAllowance) Reserve(context.Context, int64, int64, string, int64, int64) (func(llm.Usage), string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved < a.allow {
		a.reserved++
		return func(llm.Usage) {}, "", nil
	}
	a.refused++
	if a.told {
		return nil, "", nil
	}
	a.told = true
	return nil, "no more today", nil
}

func (a *countedAllowance) refusals() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

// The allowance refusing the summary: the chat is told once, the step's
// own request is not made, nothing is summarised, and the log says why.
func TestSummaryRefusedByTheAllowance(t *testing.T) {
	const limit = 4_000
	// Where the first summary request comes, with no allowance.
	first := newEnv(t, rememberModel(nil), envOptions{contextTokens: limit})
	chatLong(t, first, 43, 12)
	k := slices.IndexFunc(first.model.Requests(), func(r llm.Request) bool { return llmtest.AsksForSummary(llmtest.Request{LLM: r}) })
	if k < 0 {
		t.Fatal("no summary")
	}

	a := &countedAllowance{allow: k}
	rec := &logRecorder{}
	e := newEnv(t, rememberModel(nil), envOptions{contextTokens: limit, allowance: a, logger: slog.New(rec)})
	e.deliver(chat.In(43), "Remember: my locker code is 4821.")
	for i := range 12 {
		e.deliver(chat.In(43), fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 100)))
	}
	// Every message from the one that needed the summary on: both
	// reservations refused, the turn's own without a notice.
	answered := k // one request a turn before the summary
	testkit.WaitFor(t, "the refusals", 20*time.Second, func() bool { return a.refusals() == 2*(13-answered) })
	texts := e.chat.Texts(chat.In(43))
	if len(texts) != answered+1 || texts[answered] != "no more today" {
		t.Errorf("texts after %d answers: %q", answered, texts[min(answered, len(texts)):])
	}
	if n := len(e.model.Requests()); n != k || summaryRequests(e.model.Requests()) != 0 {
		t.Errorf("%d requests, want %d and no summary", n, k)
	}
	if rec.count("conversation not summarised") != 13-answered {
		t.Errorf("%d warnings", rec.count("conversation not summarised"))
	}
}

// The summary is the model's text: a secret the redactor knows does not
// reach the transcript or the next request, and the summary stays in the
// chat's private folder, never in the workspace its servers see.
func TestSummaryIsRedactedAndPrivate(t *testing.T) {
	const secret = "sk-summary-secret-0123456789"
	e := newEnv(t, rememberModel(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Text: "Remember: my locker code is 4821. The key is " + secret + "."}, nil
	}), envOptions{contextTokens: 4_000, secrets: []string{secret}})
	chatLong(t, e, 44, 12)
	if summaryRequests(e.model.Requests()) != 1 {
		t.Fatal("no summary")
	}
	reqs := e.model.Requests()
	if text := llmtest.PromptText(llmtest.Request{LLM: reqs[len(reqs)-1]}); strings.Contains(text, secret) || !strings.Contains(text, "locker code is 4821") {
		t.Errorf("the request after the summary: %.300q", text)
	}
	transcript, err := os.ReadFile(filepath.Join(e.manager.Private(chat.In(44)), transcriptName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(transcript), secret) || !strings.Contains(string(transcript), `{"summary":`) {
		t.Error("the transcript holds the secret, or no summary")
	}
	err = filepath.WalkDir(e.manager.Workspace(chat.In(44)), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "locker code") {
			t.Errorf("%s in the workspace holds the conversation", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// /stop while the summary is made ends the turn as any /stop does: no
// warning, no request of the step; the next turn summarises.
func TestStopWhileSummarising(t *testing.T) {
	asked := make(chan struct{}, 1)
	var calls atomic.Int32
	rec := &logRecorder{}
	e := newEnv(t, rememberModel(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if calls.Add(1) == 1 {
			asked <- struct{}{}
			<-ctx.Done()
			return llm.Response{}, &llm.Error{Provider: "script", Message: "stopped", Err: ctx.Err()}
		}
		return llm.Response{Text: "Remember: my locker code is 4821."}, nil
	}), envOptions{contextTokens: 4_000, logger: slog.New(rec)})
	e.deliver(chat.In(45), "Remember: my locker code is 4821.")
	for i := range 12 {
		e.deliver(chat.In(45), fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 100)))
	}
	<-asked
	if !e.manager.Stop(chat.In(45)) {
		t.Fatal("no turn to stop")
	}
	texts := e.chat.waitTexts(t, chat.In(45), 13)
	if n := slices.Index(texts, "Stopped."); n < 0 || slices.Contains(texts[n+1:], "Stopped.") {
		t.Errorf("texts %q, want one Stopped.", texts)
	}
	if calls.Load() != 2 || rec.count("conversation not summarised") != 0 {
		t.Errorf("%d summary requests, %d warnings; want 2 and none", calls.Load(), rec.count("conversation not summarised"))
	}
	e.deliver(chat.In(45), "What is my locker code?")
	if texts := e.chat.waitTexts(t, chat.In(45), 14); texts[13] != "Your locker code is 4821" {
		t.Errorf("answer %q", texts[13])
	}
}
