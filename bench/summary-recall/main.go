// Command summary-recall measures what summaries keep of a long chat and
// what they cost: a 200-turn scripted conversation — 40 facts stated
// first, then 159 browsing turns that read real manuals (the Go spec,
// Debian's HTML manuals) with the built-in read tool, then a question for
// the facts — through the bot's sessions (internal/session, the real agent
// loop, the real Anthropic adapter) against the llmtest fake of the
// Anthropic API, three times: with summaries (LLM_CONTEXT_TOKENS 100000),
// with today's trimming only (LLM_SUMMARIES=false), and with no budget.
// It counts the facts the last request still carries, the input tokens
// of all requests, and the share of the prompt the provider's cache would
// read (measure.go). The scripted model is honest: it answers, and
// summarises, only from the text of the request it receives (script.go).
// See bench/summary-recall/run.sh and docs/performance.md.
//
//	summary-recall [-goroot $(go env GOROOT)] [-context 100000]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

const chatID = 1001

func main() {
	goroot := flag.String("goroot", "", "the Go root whose doc/go_spec.html is read (go env GOROOT)")
	contextTokens := flag.Int("context", session.DefaultContextTokens, "LLM_CONTEXT_TOKENS of the budgeted runs")
	flag.Parse()
	if *goroot == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "summary-recall: -goroot is not set and go env GOROOT failed:", err)
			os.Exit(1)
		}
		*goroot = strings.TrimSpace(string(out))
	}
	if err := run(*goroot, *contextTokens); err != nil {
		fmt.Fprintln(os.Stderr, "summary-recall:", err)
		os.Exit(1)
	}
}

// mode is one run's settings.
type mode struct {
	name          string
	contextTokens int
	noSummaries   bool
}

// result is one run, measured.
type result struct {
	mode
	tally
	carried  int // facts the last request holds
	answered int // facts the last answer names
	notices  int // summaries the chat was told of
	elapsed  time.Duration
}

func run(goroot string, contextTokens int) error {
	modes := []mode{
		{name: "summaries", contextTokens: contextTokens},
		{name: "trimming (LLM_SUMMARIES=false)", contextTokens: contextTokens, noSummaries: true},
		{name: "no budget", contextTokens: 100_000_000, noSummaries: true},
	}
	var results []result
	for _, m := range modes {
		r, err := runChat(goroot, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %d requests in %s\n", m.name, r.requests, r.elapsed.Round(time.Second))
		results = append(results, r)
	}
	report(results, contextTokens)
	return nil
}

// runChat runs the conversation under m.
func runChat(goroot string, m mode) (result, error) {
	data, err := os.MkdirTemp("", "summary-recall-*")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(data)
	pages, err := writePages(goroot, chatdir.New(data).Workspace(chat.In(chatID)))
	if err != nil {
		return result{}, err
	}
	fake := &recorder{count: newCounter()}
	srv := llmtest.Start(llm.ProviderAnthropic, fake.reply, fake.fail)
	defer srv.Close()
	client := mcpclient.New(mcpclient.Options{Env: redact.NewEnvFilter(nil), Logger: slog.New(slog.DiscardHandler),
		Builtins: []string{session.SendToolName}})
	port := newChat()
	mgr := session.NewManager(session.Options{
		DataDir: data, Model: llm.NewAnthropic(llm.AnthropicOptions{APIKey: "sk-ant-bench", BaseURL: srv.URL, Model: "bench"}),
		ModelName: "bench", MCP: client, Chat: port, NoStream: true,
		NewMCPSession: func(ws, private string) (session.MCPSession, error) { return client.NewSession(ws, private) },
		ContextTokens: m.contextTokens, NoSummaries: m.noSummaries, Logger: slog.New(slog.DiscardHandler),
	})
	start := time.Now()
	texts := userTurns(pages)
	for i, text := range texts {
		if err := mgr.Deliver(chat.In(chatID), session.Message{Text: text, From: chatID}); err != nil {
			return result{}, err
		}
		if err := port.wait(i+1, text[:6], 2*time.Minute); err != nil {
			return result{}, fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := mgr.Close(ctx); err != nil {
		return result{}, err
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.failures) > 0 {
		return result{}, errors.New(strings.Join(fake.failures, "; "))
	}
	return result{mode: m, tally: fake.tally, carried: carried(fake.last), answered: carried(port.last()),
		notices: port.notices, elapsed: time.Since(start)}, nil
}

// recorder is the fake model's side: it answers (honest) and counts each
// request.
type recorder struct {
	count    *counter
	mu       sync.Mutex
	tally    tally
	last     string // the prompt text of the last turn request
	failures []string
}

func (r *recorder) reply(req llmtest.Request) llmtest.Reply {
	summary := llmtest.AsksForSummary(req)
	bs := r.count.blocks(req.Body)
	r.mu.Lock()
	r.tally.add(bs, summary)
	if !summary {
		r.last = llmtest.PromptText(req)
	}
	r.mu.Unlock()
	return honest(req)
}

func (r *recorder) fail(format string, args ...any) {
	r.mu.Lock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// benchChat is the chat port: it keeps the answers and counts the
// summaries the progress told of.
type benchChat struct {
	mu      sync.Mutex
	texts   []string
	notices int
	changed chan struct{}
}

func newChat() *benchChat { return &benchChat{changed: make(chan struct{}, 1)} }

func (c *benchChat) SendText(_ context.Context, _ chat.Place, text string) error {
	c.mu.Lock()
	c.texts = append(c.texts, text)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *benchChat) SendFile(context.Context, chat.Place, session.OutgoingFile, string) error {
	return errors.New("no files in this benchmark")
}

func (c *benchChat) StartActivity(context.Context, chat.Place) session.Activity { return activity{c} }

// wait waits for the n-th answer, which must start with tag.
func (c *benchChat) wait(n int, tag string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		texts := c.texts
		c.mu.Unlock()
		if len(texts) >= n {
			if !strings.HasPrefix(texts[n-1], tag) {
				return fmt.Errorf("answer %q, want one tagged %s", texts[n-1], tag)
			}
			return nil
		}
		select {
		case <-c.changed:
		case <-deadline:
			return errors.New("no answer in time")
		}
	}
}

func (c *benchChat) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.texts) == 0 {
		return ""
	}
	return c.texts[len(c.texts)-1]
}

type activity struct{ c *benchChat }

func (activity) ToolCall(string, json.RawMessage) {}
func (activity) Done()                            {}
func (a activity) Notice(string) {
	a.c.mu.Lock()
	a.c.notices++
	a.c.mu.Unlock()
}
