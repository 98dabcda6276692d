package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// BenchmarkScheduleThousandJobs runs the whole daemon with 1,000 tasks of
// 100 chats (ten each) all due at the same second, against the fake Bot
// API with Telegram's flood limits on both sides (the paced sender) and
// an instantly answering model. It reports when the last run started
// after its time, when the last answer arrived, the 429s the fake gave,
// and the heap once all is delivered; it fails unless every answer
// arrived exactly once.
//
// go test -run '^$' -bench ScheduleThousandJobs -benchtime 1x ./cmd/volcanicbot
func BenchmarkScheduleThousandJobs(b *testing.B) {
	for range b.N {
		scheduleRound(b)
	}
}

const benchChats, benchJobsPerChat = 100, 10

func scheduleRound(b *testing.B) {
	tg := telegramtest.Start(telegramtest.Options{})
	defer tg.Close()
	dataDir := b.TempDir()
	due := time.Now().Add(15 * time.Second).Truncate(time.Second)
	seedJobs(b, filepath.Join(dataDir, scheduleDir), due)
	environ := []string{
		"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(), "TELEGRAM_ALLOWED_USERS=1",
		"VOLCANIC_DATA_DIR=" + dataDir, "VOLCANIC_AGENT_DIR=" + b.TempDir(),
		"LLM_PROVIDER=openai", "LLM_MODEL=instant", "OPENAI_API_KEY=sk-bench-0123456789",
		"LOG_LEVEL=error", "LOG_FORMAT=json",
	}
	m, err := NewMain(&discard{}, environ)
	if err != nil {
		b.Fatal(err)
	}
	m.Model = instantModel{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx); m.Close() }()
	defer func() { cancel(); <-done }()
	const all = benchChats * benchJobsPerChat
	if _, err := tg.WaitFor("sendMessage", all, 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	lastArrived := time.Since(due)
	heap := memInUse()
	views, err := schedule.ReadLedger(filepath.Join(dataDir, scheduleDir))
	if err != nil {
		b.Fatal(err)
	}
	var worstStart time.Duration
	delivered := 0
	for _, v := range views {
		if v.LastRun != nil {
			worstStart = max(worstStart, v.LastRun.Started.Sub(v.LastRun.Slot))
		}
		if v.Delivery != nil && v.Delivery.State == schedule.Delivered {
			delivered++
		}
	}
	for c := range benchChats {
		if got := tg.Texts(int64(10_000 + c)); len(got) != benchJobsPerChat || !distinct(got) {
			b.Fatalf("chat %d got %d texts (want %d, each once): %q", c, len(got), benchJobsPerChat, got)
		}
	}
	if delivered != all {
		b.Fatalf("%d deliveries recorded delivered, want %d", delivered, all)
	}
	chats429, _ := tg.TooManyChats()
	b.ReportMetric(worstStart.Seconds(), "worst-start-s")
	b.ReportMetric(lastArrived.Seconds(), "last-delivered-s")
	b.ReportMetric(float64(chats429), "chats-with-429")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.Logf("1,000 tasks of 100 chats due at once: the last run started %v after its time, the last answer arrived %v after it; "+
		"%d chats got a 429; %.1f MiB in use", worstStart, lastArrived, chats429, float64(heap)/(1<<20))
}

// seedJobs writes the tasks into the ledger in dir before the bot starts.
func seedJobs(b *testing.B, dir string, due time.Time) {
	l, err := schedule.OpenLedger(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	s := schedule.New(l, nil, nil, nil, schedule.Options{})
	defer s.Close()
	for c := range benchChats {
		for k := range benchJobsPerChat {
			req := schedule.Request{Task: fmt.Sprintf("task %d of chat %d", k, c), At: due.Format(time.RFC3339)}
			if _, err := s.Create(schedule.Place{Chat: int64(10_000 + c)}, 1, req); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func distinct(s []string) bool {
	seen := map[string]bool{}
	for _, x := range s {
		if seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}
