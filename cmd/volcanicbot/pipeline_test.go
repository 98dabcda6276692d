package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// instantModel answers at once with "re: " and the user's last text.
type instantModel struct{}

func (instantModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	for _, p := range last.Parts {
		if p.Kind == llm.PartText {
			return llm.Response{Text: "re: " + p.Text}, nil
		}
	}
	return llm.Response{Text: "re: ?"}, nil
}

// BenchmarkPipeline runs the whole daemon against the fake Bot API and an
// instantly answering model, with 1,000 chats:
//
//   - latency: one message at a time (each to a chat the bot has not seen,
//     then to one it has), from the moment the update is queued at the fake
//     to the moment the answer's sendMessage reaches it — what the bot adds;
//   - throughput: bursts of 1,000 messages, one per chat, all queued at once;
//   - memory: heap and stacks per idle session (a chat whose turn is over),
//     after a GC, with the fake's own records dropped.
//
// go test -run '^$' -bench Pipeline -benchtime 3x ./cmd/volcanicbot
func BenchmarkPipeline(b *testing.B) {
	const chats = 1000
	// What the bot adds, not Telegram's flood limits (30 messages a
	// second in all): neither side enforces them here (bench/sender
	// measures the pacing).
	tg := telegramtest.Start(telegramtest.Options{Limits: &telegramtest.NoLimits})
	defer tg.Close()
	ids := make([]string, chats)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	dataDir := b.TempDir()
	environ := []string{
		"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		"TELEGRAM_ALLOWED_USERS=" + strings.Join(ids, ","),
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + b.TempDir(),
		"LLM_PROVIDER=openai", "LLM_MODEL=instant", "OPENAI_API_KEY=sk-bench-0123456789",
		"LOG_LEVEL=error", "LOG_FORMAT=json",
	}
	m, err := NewMain(&discard{}, environ)
	if err != nil {
		b.Fatal(err)
	}
	m.Model = instantModel{}
	m.TelegramLimits = unpaced
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx); m.Close() }()
	defer func() { cancel(); <-done }()
	if _, err := tg.WaitFor("getUpdates", 1, 10*time.Second); err != nil {
		b.Fatal(err)
	}

	sent := 0 // sendMessage requests so far
	wait := func(n int) {
		if _, err := tg.WaitFor("sendMessage", n, 60*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	baseline := memInUse()

	// Latency, one message at a time: cold (new chat) and warm.
	var cold, warm []time.Duration
	for _, round := range []*[]time.Duration{&cold, &warm} {
		for i := 1; i <= 200; i++ {
			t0 := time.Now()
			tg.Message(int64(i), int64(i), "hello "+strconv.Itoa(i))
			sent++
			wait(sent)
			*round = append(*round, time.Since(t0))
		}
	}

	// Throughput: bursts of one message per chat.
	b.ResetTimer()
	var total time.Duration
	for n := 0; n < b.N; n++ {
		t0 := time.Now()
		for c := 1; c <= chats; c++ {
			tg.Message(int64(c), int64(c), "burst "+strconv.Itoa(n))
		}
		sent += chats
		wait(sent)
		total += time.Since(t0)
	}
	b.StopTimer()
	rate := float64(b.N*chats) / total.Seconds()

	// Memory per idle session: every chat has had its turns, and every
	// turn has ended (a running turn leaves a mark in its private folder).
	tg.Forget()
	sent = 0
	if !testkit.Until(time.Minute, func() bool {
		marks, _ := filepath.Glob(filepath.Join(dataDir, "private", "*", "turn"))
		return len(marks) == 0
	}) {
		b.Fatal("turns still running a minute after their answers")
	}
	perSession := float64(memInUse()-baseline) / chats

	b.ReportMetric(rate, "msgs/s")
	b.ReportMetric(float64(pct(warm, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(warm, 99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(pct(cold, 99).Microseconds())/1000, "p99-first-ms")
	b.ReportMetric(perSession/1024, "KB/idle-session")
	b.Logf("latency warm p50 %v p99 %v; first message of a chat p50 %v p99 %v; %.0f msgs/s; %.1f KB per idle session",
		pct(warm, 50), pct(warm, 99), pct(cold, 50), pct(cold, 99), rate, perSession/1024)
}

type discard struct{ sync.Mutex }

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// memInUse is the heap and goroutine stacks in use after a GC.
func memInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}
