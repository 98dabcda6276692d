package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/bench/internal/botrun"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// answerTimeout is how long a chat waits for one answer before it counts
// the message unanswered and sends the next.
const answerTimeout = 5 * time.Minute

// soaker is one run: the fakes, the bot and what the chats counted.
type soaker struct {
	o     options
	tmp   string
	data  string
	site  *site
	tg    *telegramtest.Fake
	model *llmtest.Server
	bot   *botrun.Bot
	ids   []int64

	mu       sync.Mutex
	failures []string        // what the fake model found wrong
	sent     map[int64]int   // messages each chat sent (visits, /new, the upload)
	answered map[int64]int   // of them answered in time
	late     map[int64][]int // visits not answered in time, checked again at the end
	stopped  bool
}

// start runs the bot with only documented variables.
func start(o options, tmp string, st *site) (*soaker, error) {
	s := &soaker{o: o, tmp: tmp, data: filepath.Join(tmp, "data"), site: st,
		sent: map[int64]int{}, answered: map[int64]int{}, late: map[int64][]int{}}
	s.tg = telegramtest.Start(telegramtest.Options{})
	s.model = llmtest.Start(llm.ProviderOpenAI, script(st.URL), func(format string, args ...any) {
		s.mu.Lock()
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
		s.mu.Unlock()
	})
	users := make([]string, o.chats)
	for i := range o.chats {
		id := int64(1000 + i) // a private chat has its user's id
		s.ids = append(s.ids, id)
		users[i] = strconv.FormatInt(id, 10)
	}
	addr, err := botrun.FreeAddr()
	if err != nil {
		return s, err
	}
	s.bot, err = botrun.Start(o.bin, tmp, []string{
		"HOME=" + tmp, "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + s.tg.Token(), "TELEGRAM_API_URL=" + s.tg.URL(),
		"TELEGRAM_ALLOWED_USERS=" + strings.Join(users, ","),
		"VOLCANIC_DATA_DIR=" + s.data, "VOLCANIC_AGENT_DIR=" + filepath.Join(tmp, "agent"),
		"LLM_PROVIDER=openai", "LLM_MODEL=soak", "OPENAI_API_KEY=sk-soak-0123456789", "OPENAI_BASE_URL=" + s.model.URL,
		"PLAYWRIGHT_ENABLED=true", "PLAYWRIGHT_SHARED=true",
		"PLAYWRIGHT_COMMAND=" + filepath.Join(o.npm, "playwright-mcp"),
		"PLAYWRIGHT_EXECUTABLE_PATH=" + o.chromium, "PLAYWRIGHT_NO_SANDBOX=true",
		"CHAT_DISK_BUDGET_MB=" + strconv.Itoa(o.budgetMB),
		"HTTP_ADDR=" + addr, "LOG_FORMAT=json", "LOG_LEVEL=info",
	})
	if err != nil {
		return s, err
	}
	if err := s.bot.WaitHealthy(addr, 2*time.Minute, 200*time.Millisecond); err != nil {
		return s, err
	}
	return s, nil
}

// stop ends the bot (SIGTERM: it saves each chat's browser state) and the
// fakes.
func (s *soaker) stop() {
	s.mu.Lock()
	stopped := s.stopped
	s.stopped = true
	s.mu.Unlock()
	if stopped {
		return
	}
	if s.bot != nil {
		s.bot.Stop()
	}
	s.model.Close()
	s.tg.Close()
}

// soak runs the chats for the duration while the sampler measures, then
// reports.
func (s *soaker) soak(ctx context.Context) error {
	begin := time.Now()
	var samples []sample
	var sampleErr error
	sampling, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(s.o.every)
		defer tick.Stop()
		for {
			sm, err := measure(s.data, time.Since(begin))
			if err != nil {
				sampleErr = err
				return
			}
			samples = append(samples, sm)
			cb, cbMax := sm.perChat(s.o.chats, countedBytes)
			fmt.Fprintf(os.Stderr, "%s  data dir %7.1f MB %6d files  a chat counted %.2f / %.2f MB\n",
				clock(sm.at), mb(sm.total.bytes), sm.total.files, mb(int64(cb)), mb(cbMax))
			select {
			case <-sampling.Done():
				return
			case <-tick.C:
			}
		}
	})

	// One message a tick at most, for all chats together; each chat sends
	// its next message when its answer has come.
	tick := time.NewTicker(time.Duration(float64(time.Second) / s.o.rate))
	defer tick.Stop()
	end := begin.Add(s.o.duration)
	var chats sync.WaitGroup
	for _, id := range s.ids {
		chats.Go(func() { s.chat(ctx, id, tick.C, end) })
	}
	chats.Wait()
	elapsed := time.Since(begin)
	stopSampling()
	wg.Wait()
	if sampleErr != nil {
		return sampleErr
	}
	return s.report(elapsed, samples)
}

// chat is one chat's conversation: the upload, then visits and /new until
// end.
func (s *soaker) chat(ctx context.Context, id int64, tick <-chan time.Time, end time.Time) {
	upload := []byte(strings.Repeat(fmt.Sprintf("notes of chat %d, to keep\n", id), 2000))
	sendUpload := func() {
		s.tg.Document(id, id, "notes.txt", "text/plain", upload, 0, "Please keep this file for later.")
	}
	s.send(id, sendUpload, func() bool { return s.has(id, keptMarker) })
	news := 0
	for k := 1; time.Now().Before(end) && ctx.Err() == nil; k++ {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if k%s.o.newEvery == 0 {
			news++
			want := news
			s.send(id, func() { s.tg.Message(id, id, "/new") },
				func() bool { return s.countText(id, "New conversation started.") >= want })
			continue
		}
		// The k-th triangular number: every chat visits every page, on odd
		// and even visits alike.
		path := s.site.paths[(int(id)+k*(k+1)/2)%len(s.site.paths)]
		if !s.send(id, func() { s.tg.Message(id, id, visitText(k, path)) }, func() bool { return s.has(id, marker(k)) }) {
			s.mu.Lock()
			s.late[id] = append(s.late[id], k)
			s.mu.Unlock()
		}
	}
}

// send sends one message and waits for its answer.
func (s *soaker) send(id int64, message func(), answered func() bool) bool {
	s.mu.Lock()
	s.sent[id]++
	s.mu.Unlock()
	message()
	if s.tg.WaitUntil(answered, answerTimeout) != nil {
		return false
	}
	s.mu.Lock()
	s.answered[id]++
	s.mu.Unlock()
	return true
}

// has tells whether chat got a final message holding text.
func (s *soaker) has(id int64, text string) bool {
	return s.countText(id, text) > 0
}

func (s *soaker) countText(id int64, text string) int {
	n := 0
	for _, m := range s.tg.Sent(id) {
		if !m.Deleted && m.Method == "sendMessage" && strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}
