package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// /stop during a streamed answer, five times, with both providers: each
// stopped request was billed, so each is counted — an estimate of its
// prompt and of what was streamed — in /usage (marked as estimated) and
// in the cost metric. (Before: five requests, 0 tokens counted.)
func TestE2EStoppedAnswersCost(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			tg := telegramtest.Start(telegramtest.Options{NoDrafts: true})
			t.Cleanup(tg.Close)
			addr := freeAddr(t)
			long := make([]string, 300)
			for i := range long {
				long[i] = fmt.Sprintf("word%d ", i)
			}
			d := startDaemon(t, func(llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Chunks: long, ChunkDelay: 100 * time.Millisecond,
					Usage: llm.Usage{InputTokens: 1500, OutputTokens: 900}}
			}, daemonOptions{provider: provider, tg: tg, paced: true,
				extra: []string{"METRICS_ADDR=" + addr, "LLM_PRICE_INPUT_PER_MTOK=3", "LLM_PRICE_OUTPUT_PER_MTOK=15"}})
			const stops = 5
			for i := 1; i <= stops; i++ {
				edits := len(tg.RequestsFor("editMessageText"))
				d.tg.Message(alice, alice, fmt.Sprintf("talk %d", i))
				if _, err := d.tg.WaitFor("editMessageText", edits+1, 20*time.Second); err != nil {
					t.Fatal(err)
				}
				d.tg.Message(alice, alice, "/stop")
				waitTextCount(t, d, alice, "Stopped.", i)
			}
			shown := 0
			for _, s := range d.texts(alice) {
				if s != "Stopped." {
					shown += len(s)
				}
			}
			d.tg.Message(alice, alice, "/usage")
			d.waitText(alice, "Model usage of this chat")
			texts := d.texts(alice)
			report := texts[len(texts)-1]
			metrics := scrape(t, addr)
			cost := regexp.MustCompile(`(?m)^volcanicbot_model_cost_dollars_total\{[^}]*\} (\S+)$`).FindStringSubmatch(metrics)
			t.Logf("%d requests stopped, %d characters shown; /usage: %q; cost metric: %v", stops, shown, report, cost)
			if !strings.Contains(report, fmt.Sprintf("in %d model calls", stops)) || !strings.Contains(report, "estimated") {
				t.Errorf("/usage says %q: want %d model calls, their tokens estimated", report, stops)
			}
			if cost == nil {
				t.Fatalf("/metrics has no cost:\n%s", metrics)
			}
			if v, err := strconv.ParseFloat(cost[1], 64); err != nil || v <= 0 {
				t.Errorf("cost metric %q, want more than 0", cost[1])
			}
		})
	}
}

// waitTextCount waits until n of the chat's texts contain substr.
func waitTextCount(t *testing.T, d *daemon, chat int64, substr string, n int) {
	t.Helper()
	got := 0
	if err := d.tg.WaitUntil(func() bool {
		got = 0
		for _, s := range d.texts(chat) {
			if strings.Contains(s, substr) {
				got++
			}
		}
		return got >= n
	}, 20*time.Second); err != nil {
		t.Fatalf("chat %d got %q %d times, want %d: %q", chat, substr, got, n, d.texts(chat))
	}
}
