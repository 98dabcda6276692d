package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/spend"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// byModel answers with the model the request asked for: "<text> from
// <model>", each call 700 tokens (600 in, 200 of them cached; 100 out).
func byModel(req llmtest.Request) llmtest.Reply {
	r := llmtest.Text(fmt.Sprintf("%s from %s", lastUserText(req), req.Model()))
	r.Usage = llm.Usage{InputTokens: 600, CacheReadTokens: 200, OutputTokens: 100}
	return r
}

// waitKeyboard waits for the n-th message of chat whose text holds substr
// to have buttons, and returns it.
func (d *daemon) waitKeyboard(chat int64, substr string) telegramtest.Message {
	d.t.Helper()
	var msg telegramtest.Message
	if err := d.tg.WaitUntil(func() bool {
		for _, m := range d.tg.Sent(chat) {
			if strings.Contains(m.Text, substr) && m.Keyboard != nil {
				msg = m
				return true
			}
		}
		return false
	}, 20*time.Second); err != nil {
		d.t.Fatalf("chat %d never got %q with buttons; got %q", chat, substr, d.tg.Texts(chat))
	}
	return msg
}

// A model per chat, through the real binary with both adapters: every
// chat starts with the first of LLM_MODELS; /model shows them as buttons;
// a press or /model <name> switches that chat only, and its requests go
// to its model; a name not offered is refused with the list; a
// stranger's press changes nothing; the pick is kept across a restart,
// in the chat's private folder; /usage and /metrics have each model's
// cost.
func TestE2EModelPerChat(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dataDir, tg, addr := t.TempDir(), newTelegram(t), freeAddr(t)
			o := daemonOptions{provider: provider, dataDir: dataDir, tg: tg, extra: []string{"LLM_MODEL=", "LLM_MODELS=small,big",
				"LLM_PRICES=small=1/0.1/2,big=10/1/20", "METRICS_ADDR=" + addr}}
			d := startDaemon(t, byModel, o)
			d.tg.Message(alice, alice, "one")
			d.waitText(alice, "one from small")

			d.tg.Message(alice, alice, "/model")
			list := d.waitKeyboard(alice, "This chat's model: small (the default).")
			if got := labelsOf(list); !slices.Equal(got, []string{"✅ small", "big"}) {
				t.Errorf("buttons %q", got)
			}
			if a := d.press(alice, alice, list, "big"); a.Text != "This chat's model is now big. It answers from your next message on." {
				t.Errorf("press answered %q", a.Text)
			}
			d.waitKeyboard(alice, "This chat's model: big.") // the list edited
			d.tg.Message(alice, alice, "two")
			d.waitText(alice, "two from big")
			d.tg.Message(bob, bob, "three")
			d.waitText(bob, "three from small") // another chat keeps its own

			d.tg.Message(bob, bob, "/model gpt-5")
			d.waitText(bob, `There is no model "gpt-5" here. The models offered: small, big.`)

			// A stranger pressing the button of a group's /model changes nothing.
			const team, stranger = int64(-100500), int64(999)
			d.tg.Message(team, alice, "/model@"+d.tg.Me().Username)
			glist := d.waitKeyboard(team, "This chat's model: small (the default).")
			if a := d.press(team, stranger, glist, "big"); a.Text != "Sorry, you are not allowed to use this bot." || !a.ShowAlert {
				t.Errorf("a stranger's press answered %+v", a)
			}

			// The money: each model's cost in /usage and /metrics.
			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, "• big: 700 tokens in 1 call, 200 cached, about $0.0062 | 700 tokens in 1 call, 200 cached, about $0.0062")
			d.waitText(alice, "• small: 700 tokens in 1 call, 200 cached, about $0.0006")
			d.waitText(alice, "Prompt cache this month: 400 of 1,200 input tokens were cache hits (33%)")
			text := scrape(t, addr)
			for _, want := range []string{
				fmt.Sprintf(`volcanicbot_model_cost_dollars_total{model="big",provider="%s"} 0.0062`, provider),
				fmt.Sprintf(`volcanicbot_model_cost_dollars_total{model="small",provider="%s"} 0.0012`, provider),
			} {
				if !strings.Contains(text, want) {
					t.Errorf("/metrics lacks %q", want)
				}
			}
			d.stop()

			path := filepath.Join(dataDir, "private", fmt.Sprint(alice), "model.json")
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the pick's file: %v, %v", fi, err)
			}
			if _, err := os.Stat(filepath.Join(dataDir, "chats", fmt.Sprint(alice), "model.json")); !os.IsNotExist(err) {
				t.Errorf("the pick is in the workspace: %v", err)
			}

			// After a restart the chat keeps its pick; /model <name> switches back.
			d = startDaemon(t, byModel, o)
			d.tg.Message(alice, alice, "four")
			d.waitText(alice, "four from big")
			d.tg.Message(alice, alice, "/model small")
			d.waitText(alice, "This chat's model is now small (the default). It answers from your next message on.")
			d.tg.Message(alice, alice, "five")
			d.waitText(alice, "five from small")
			models := llmtest.Models(d.model.Requests())
			if !slices.Equal(models, []string{"big", "small"}) {
				t.Errorf("models asked after the restart %q, want [big small]", models)
			}
		})
	}
}

// labelsOf are a message's button labels, in order.
func labelsOf(m telegramtest.Message) []string {
	var out []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			out = append(out, b.Text)
		}
	}
	return out
}

// The money allowance through the real binary: a chat's dollars at its
// model's price (cached input at the cached price), reached, told once,
// no request made until the next UTC day; /usage says what is left.
func TestE2EMoneyAllowance(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 12, 1, 22, 30, 0, 0, time.UTC))
	// A call: 400 input at $3, 200 cached at $0.30, 100 output at $15 = $0.00276.
	d := startDaemon(t, costly, daemonOptions{main: func(m *Main) { m.UsageClock = clock.Now },
		extra: []string{"LLM_PRICES=test-model=3/0.3/15", "LLM_DAILY_USD_PER_CHAT=0.005"}})
	d.tg.Message(alice, alice, "one")
	d.waitText(alice, "answer to one")
	d.tg.Message(alice, alice, "two") // $0.00552 now
	d.waitText(alice, "answer to two")
	requests := len(d.model.Requests())
	d.tg.Message(alice, alice, "three")
	d.waitText(alice, "This chat has used today's allowance of $0.0050. I can answer again from 00:00 UTC (in 1 h 30 min)")
	d.tg.Message(alice, alice, "four")
	waitLogCount(t, d, "no model request: a daily allowance is used", 2)
	if n := len(d.model.Requests()); n != requests {
		t.Errorf("%d model requests after the allowance was used", n-requests)
	}
	d.tg.Message(alice, alice, "/usage")
	d.waitText(alice, "Today (2026-12-01): 1,400 tokens in 2 model calls (input 1,200, of which 400 cached; output 200), about $0.0055")
	d.waitText(alice, "Allowance: $0.0050 a day for this chat, $0 left today.")
	d.tg.Message(bob, bob, "another chat")
	d.waitText(bob, "answer to another chat")

	clock.Set(time.Date(2026, 12, 2, 0, 0, 1, 0, time.UTC))
	d.tg.Message(alice, alice, "six")
	d.waitText(alice, "six") // with the messages that got no answer
}

// LLM_MODEL, LLM_MODELS, LLM_PRICES and the money allowances: what they
// make, and every bad value refused naming its variable.
func TestModelsConfig(t *testing.T) {
	load := func(env ...string) (*Config, error) {
		env = append([]string{"HOME=/home/u"}, env...)
		return LoadConfig(lookupIn(env), env)
	}
	ok := []struct {
		env    []string
		model  string
		models []string
		prices map[string]spend.Price
	}{
		{[]string{"LLM_MODEL=a"}, "a", []string{"a"}, nil},
		{[]string{"LLM_MODELS=a, b"}, "a", []string{"a", "b"}, nil},
		{[]string{"LLM_MODEL=b", "LLM_MODELS=a,b,c"}, "b", []string{"b", "a", "c"}, nil},
		{[]string{"LLM_MODELS=a,b", "LLM_PRICE_INPUT_PER_MTOK=3", "LLM_PRICE_OUTPUT_PER_MTOK=15", "LLM_PRICES=b=1/0.5/2"}, "a", []string{"a", "b"},
			map[string]spend.Price{"a": {Input: 3, Cached: 3, Output: 15}, "b": {Input: 1, Cached: 0.5, Output: 2}}},
		{[]string{"LLM_MODELS=a", "LLM_PRICES=a=1/1/1", "LLM_DAILY_USD_PER_CHAT=2.5", "LLM_DAILY_USD_PER_USER=0"}, "a", []string{"a"},
			map[string]spend.Price{"a": {Input: 1, Cached: 1, Output: 1}}},
	}
	for _, tt := range ok {
		c, err := load(tt.env...)
		if err != nil {
			t.Errorf("%q: %v", tt.env, err)
			continue
		}
		if c.LLM.Model != tt.model || !slices.Equal(c.LLM.Models, tt.models) || fmt.Sprint(c.LLM.Prices) != fmt.Sprint(tt.prices) {
			t.Errorf("%q: model %q, models %q, prices %v; want %q, %q, %v", tt.env, c.LLM.Model, c.LLM.Models, c.LLM.Prices, tt.model, tt.models, tt.prices)
		}
	}
	if c, _ := load("LLM_MODELS=a", "LLM_PRICES=a=1/1/1", "LLM_DAILY_USD_PER_CHAT=2.5"); c == nil || c.LLM.DailyUSDPerChat != 2.5 {
		t.Errorf("LLM_DAILY_USD_PER_CHAT: %+v", c)
	}
	bad := []struct {
		env  []string
		want string
	}{
		{[]string{"LLM_MODEL=c", "LLM_MODELS=a,b"}, `LLM_MODEL: "c" is not one of LLM_MODELS (a, b): leave it unset`},
		{[]string{"LLM_MODELS=a,b,a"}, "LLM_MODELS: names a twice"},
		{[]string{"LLM_MODELS=a,big model"}, `LLM_MODELS: "big model": a model name has no spaces`},
		{[]string{"LLM_PRICES=gpt-4o=2.5/x/10"}, `LLM_PRICES: "gpt-4o=2.5/x/10": "x" is not a price in dollars`},
		{[]string{"LLM_PRICES=gpt-4o"}, `LLM_PRICES: "gpt-4o" is not model=input/cached/output`},
		{[]string{"LLM_MODEL=a", "LLM_PRICES=a=1/1/1", "LLM_PRICE_INPUT_PER_MTOK=3"},
			"LLM_PRICES: prices the default model a, which LLM_PRICE_INPUT_PER_MTOK and LLM_PRICE_OUTPUT_PER_MTOK (llm.price_*_per_mtok) price too: keep one of them"},
		{[]string{"LLM_MODELS=a,b", "LLM_PRICES=a=1/1/1", "LLM_DAILY_USD_PER_CHAT=1"},
			"LLM_DAILY_USD_PER_CHAT: needs a price for every model offered, and b has none"},
		{[]string{"LLM_MODEL=a", "LLM_DAILY_USD_PER_USER=1"}, "LLM_DAILY_USD_PER_USER: needs a price for every model offered, and a has none"},
		{[]string{"LLM_DAILY_USD_PER_CHAT=$2"}, "LLM_DAILY_USD_PER_CHAT: must be an amount in dollars, such as 2 or 0.50"},
		{[]string{"LLM_DAILY_USD_PER_USER=-1"}, "LLM_DAILY_USD_PER_USER: must be 0 (none) or more (got -1)"},
	}
	for _, tt := range bad {
		if _, err := load(tt.env...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.env, err, tt.want)
		}
	}
}
