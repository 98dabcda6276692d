package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Each model call costs 700 tokens: 600 in (200 of them cached), 100 out.
func costly(req llmtest.Request) llmtest.Reply {
	r := llmtest.Text("answer to " + lastUserText(req))
	r.Usage = llm.Usage{InputTokens: 600, CacheReadTokens: 200, OutputTokens: 100}
	return r
}

// The daily allowance, with both model fakes: reached, told once, no
// model request until an admin lifts it or the next UTC day; the usage is
// kept across a restart; /usage says what was used and what it cost.
func TestE2EDailyAllowance(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			clock := testkit.NewClock(time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC))
			dataDir, tg := t.TempDir(), newTelegram(t)
			o := daemonOptions{provider: provider, dataDir: dataDir, tg: tg, main: func(m *Main) { m.UsageClock = clock.Now },
				extra: []string{"LLM_DAILY_TOKENS_PER_CHAT=1000", "LLM_PRICE_INPUT_PER_MTOK=3", "LLM_PRICE_OUTPUT_PER_MTOK=15",
					fmt.Sprintf("TELEGRAM_ADMINS=%d", eve)}}
			d := startDaemon(t, costly, o)
			d.tg.Message(alice, alice, "one")
			d.waitText(alice, "answer to one")
			d.tg.Message(alice, alice, "two") // 1,400 tokens now
			d.waitText(alice, "answer to two")
			requests := len(d.model.Requests())

			d.tg.Message(alice, alice, "three")
			d.waitText(alice, "This chat has used today's allowance of 1,000 tokens. I can answer again from 00:00 UTC (in 1 h 30 min)")
			d.tg.Message(alice, alice, "four")
			waitLogCount(t, d, "no model request: a daily allowance is used", 2)
			if n := len(d.model.Requests()); n != requests {
				t.Errorf("%d model requests after the allowance was used", n-requests)
			}
			if n := strings.Count(strings.Join(d.texts(alice), "\n"), "allowance of 1,000 tokens"); n != 1 {
				t.Errorf("told %d times, want once", n)
			}
			d.tg.Message(bob, bob, "another chat")
			d.waitText(bob, "answer to another chat")

			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, "Today (2026-12-01): 1,400 tokens in 2 model calls (input 1,200, of which 400 cached; output 200), about $0.0066")
			d.waitText(alice, "Allowance: 1,000 tokens a day for this chat, 0 left today.")

			// A non-admin cannot lift it; an admin can, from their own chat.
			d.tg.Message(alice, alice, "/allow_more")
			d.waitText(alice, "Only an admin of this bot")
			d.tg.Message(eve, eve, fmt.Sprintf("/allow-more %d", alice))
			d.waitText(eve, fmt.Sprintf("The daily allowance of chat %d is lifted", alice))
			d.tg.Message(alice, alice, "five")
			// The messages that got no answer are in the conversation (the
			// OpenAI wire has them in one message with "five").
			d.waitText(alice, "five")
			d.stop()

			// After a restart: the day's usage is still there, and the lift.
			d = startDaemon(t, costly, o)
			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, "Today (2026-12-01): 2,100 tokens in 3 model calls")
			d.waitText(alice, "(lifted by an admin for today)")
			if _, err := os.Stat(filepath.Join(dataDir, "usage", "2026-12-01.jsonl")); err != nil {
				t.Error(err)
			}

			// The next UTC day starts anew; the month keeps the count.
			clock.Set(time.Date(2026, 12, 2, 0, 0, 1, 0, time.UTC))
			d.tg.Message(alice, alice, "six")
			d.waitText(alice, "answer to six")
			d.tg.Message(alice, alice, "seven")
			d.waitText(alice, "answer to seven") // 1,400 today: the allowance is checked before a request
			d.tg.Message(alice, alice, "eight")
			d.waitText(alice, "I can answer again from 00:00 UTC (in 24 h 0 min)")
			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, "This month (December 2026): 3,500 tokens in 5 model calls")
		})
	}
}

// /metrics has the spend — the model's cost by provider and model, the
// allowances reached —, and the usage journal is kept to the current
// month from the start.
func TestE2ESpendMetrics(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	dataDir, addr := t.TempDir(), freeAddr(t)
	old := filepath.Join(dataDir, "usage", "2026-11-30.jsonl")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte(`{"chat":100,"user":100,"in":5,"out":5}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, costly, daemonOptions{dataDir: dataDir, main: func(m *Main) { m.UsageClock = clock.Now },
		extra: []string{"METRICS_ADDR=" + addr, "LLM_DAILY_TOKENS_PER_CHAT=1000", "LLM_PRICE_INPUT_PER_MTOK=3", "LLM_PRICE_OUTPUT_PER_MTOK=15"}})
	d.tg.Message(alice, alice, "one")
	d.waitText(alice, "answer to one")
	d.tg.Message(alice, alice, "two")
	d.waitText(alice, "answer to two")
	d.tg.Message(alice, alice, "three")
	d.waitText(alice, "This chat has used today's allowance")
	text := scrape(t, addr)
	for _, want := range []string{
		`volcanicbot_model_cost_dollars_total{model="test-model",provider="openai"} 0.0066`,
		`volcanicbot_allowance_reached_total{scope="chat"} 1`,
		`volcanicbot_allowance_reached_total{scope="user"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
	d.waitLog("usage journal pruned")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("last month's journal after the start: %v", err)
	}
}

// scrape is GET /metrics on addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// waitLogCount waits for n lines of the daemon's log that contain substr.
func waitLogCount(t *testing.T, d *daemon, substr string, n int) {
	t.Helper()
	if !testkit.Until(20*time.Second, func() bool { return strings.Count(d.logs.String(), substr) >= n }) {
		t.Fatalf("the daemon logged %q %d times, want %d", substr, strings.Count(d.logs.String(), substr), n)
	}
}

// Invalid allowance and price values are refused at start, naming the
// variable.
func TestAllowanceVariablesRefused(t *testing.T) {
	tests := []struct{ env, want string }{
		{"LLM_DAILY_TOKENS_PER_CHAT=lots", "LLM_DAILY_TOKENS_PER_CHAT: must be a whole number of tokens, 0 for none"},
		{"LLM_DAILY_TOKENS_PER_USER=-5", "LLM_DAILY_TOKENS_PER_USER: must be 0 (none) or more (got -5)"},
		{"LLM_DAILY_TOKENS_PER_USER=1.5", "LLM_DAILY_TOKENS_PER_USER: must be a whole number"},
		{"LLM_PRICE_INPUT_PER_MTOK=$3", "LLM_PRICE_INPUT_PER_MTOK: must be a price in dollars per million tokens"},
		{"LLM_PRICE_OUTPUT_PER_MTOK=-1", "LLM_PRICE_OUTPUT_PER_MTOK: must be 0 or more (got -1)"},
		{"LLM_PRICE_OUTPUT_PER_MTOK=NaN", "LLM_PRICE_OUTPUT_PER_MTOK: must be 0 or more"},
		{"LLM_PRICE_OUTPUT_PER_MTOK=0x10", "LLM_PRICE_OUTPUT_PER_MTOK: must be a price"},
	}
	for _, tt := range tests {
		env := []string{"HOME=/home/u", tt.env}
		_, err := LoadConfig(lookupIn(env), env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.env, err, tt.want)
		}
	}
	c, err := LoadConfig(lookupIn([]string{"HOME=/home/u", "LLM_DAILY_TOKENS_PER_CHAT=200000", "LLM_PRICE_INPUT_PER_MTOK=0.15"}), nil)
	if err != nil || c.LLM.DailyTokensPerChat != 200000 || c.LLM.PriceInputPerMTok != 0.15 {
		t.Errorf("%+v, %v", c, err)
	}
}
