package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/spend"
)

// /usage with the real ledger: the chat's cost per model and the prompt
// cache's share; an admin sees every chat's too, anyone else only their
// chat's.
func TestUsagePerModel(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	l := spend.New(spend.Options{Dir: t.TempDir(), DefaultModel: "small", Now: func() time.Time { return now },
		Prices: map[string]spend.Price{"small": {Input: 1, Cached: 0.1, Output: 2}, "big": {Input: 10, Cached: 1, Output: 20}}})
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.Record(alice, alice, "small", llm.Usage{InputTokens: 600, CacheReadTokens: 200, OutputTokens: 100})
	l.Record(alice, alice, "big", llm.Usage{InputTokens: 600, CacheReadTokens: 200, OutputTokens: 100})
	l.Record(bob, bob, "big", llm.Usage{InputTokens: 1000, OutputTokens: 100})
	h := startBot(t, func(o *testOptions) { o.Admins = []int64{admin}; o.Usage = l })

	h.fake.Message(alice, alice, "/usage")
	got := h.texts(t, alice, 1)[0]
	for _, want := range []string{
		"Today (2026-12-02): 1,400 tokens in 2 model calls (input 1,200, of which 400 cached; output 200), about $0.0068",
		"• big: 700 tokens in 1 call, 200 cached, about $0.0062 | 700 tokens in 1 call, 200 cached, about $0.0062",
		"• small: 700 tokens in 1 call, 200 cached, about $0.0006 | 700 tokens in 1 call, 200 cached, about $0.0006",
		"Prompt cache this month: 400 of 1,200 input tokens were cache hits (33%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Every chat") {
		t.Errorf("a user who is no admin sees every chat:\n%s", got)
	}

	h.fake.Message(admin, admin, "/usage")
	got = h.texts(t, admin, 1)[0]
	for _, want := range []string{
		"Today (2026-12-02): no model calls", // the admin's own chat
		"Every chat (you are an admin):\nToday (2026-12-02): 2,500 tokens in 3 model calls",
		"• big: 1,800 tokens in 2 calls, 200 cached, about $0.02 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("an admin's /usage lacks %q:\n%s", want, got)
		}
	}
}
