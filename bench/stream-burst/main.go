// Command stream-burst is the flood-control benchmark of issue 13: a burst
// of chats, each asking the real volcanicbot binary for several answers in
// a row, every answer streamed by a slow model, against a fake Bot API that
// enforces Telegram's flood limits (1 message a second in a chat, 20 a
// minute in a group, 30 a second in all) and answers a call that breaks
// them with a 429 and retry_after. It prints one Markdown table row:
// the 429s (in all, the chats that got one, the most one chat got), the
// time until every final answer was delivered, and the streamed updates
// sent (drafts and edits) against those coalesced in the bot's queues.
//
//	go build -o bin/volcanicbot ./cmd/volcanicbot
//	go run ./bench/stream-burst -bin bin/volcanicbot [-chats 200] [-answers 5] [-groups 0] [-drafts]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/bench/internal/botrun"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/volcanicbot", "the volcanicbot binary")
	flag.IntVar(&o.chats, "chats", 200, "chats in the burst")
	flag.IntVar(&o.answers, "answers", 5, "answers each chat asks for, one after the other")
	flag.IntVar(&o.groups, "groups", 0, "how many of the chats are groups (the others are private)")
	flag.BoolVar(&o.drafts, "drafts", false, "the fake Bot API takes sendMessageDraft (private chats stream as drafts)")
	flag.IntVar(&o.pieces, "pieces", 30, "pieces of text in each answer")
	flag.DurationVar(&o.gap, "gap", 100*time.Millisecond, "the model's pause between pieces")
	flag.BoolVar(&o.stream, "stream", true, "STREAM_REPLIES")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "stream-burst:", err)
		os.Exit(1)
	}
}

// options are the benchmark's flags.
type options struct {
	bin                            string
	chats, answers, groups, pieces int
	gap                            time.Duration
	drafts, stream                 bool
}

// done marks the end of an answer: the last piece, without a space after
// it, so that no streamed update shows it (the bot shows whole words).
func done(n int) string { return fmt.Sprintf("[done-%d]", n) }

var question = regexp.MustCompile(`question (\d+)`)

// run starts the fakes and the bot, runs the burst and prints its row.
func run(o options) error {
	tg := telegramtest.Start(telegramtest.Options{NoDrafts: !o.drafts})
	defer tg.Close()
	var failures []string
	var mu sync.Mutex
	model := llmtest.Start(llm.ProviderOpenAI, o.reply, func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	})
	defer model.Close()

	data, err := os.MkdirTemp("", "stream-burst-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	ids, users := o.chatIDs()
	addr, err := botrun.FreeAddr()
	if err != nil {
		return err
	}
	bot, err := botrun.Start(o.bin, data, []string{
		"HOME=" + data, "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		"TELEGRAM_ALLOWED_USERS=" + strings.Join(users, ","),
		"VOLCANIC_DATA_DIR=" + filepath.Join(data, "data"), "VOLCANIC_AGENT_DIR=" + filepath.Join(data, "agent"),
		"LLM_PROVIDER=openai", "LLM_MODEL=bench", "OPENAI_API_KEY=sk-bench-0123456789", "OPENAI_BASE_URL=" + model.URL,
		"HTTP_ADDR=" + addr, "LOG_FORMAT=json", "LOG_LEVEL=info",
		"STREAM_REPLIES=" + strconv.FormatBool(o.stream),
	})
	if err != nil {
		return err
	}
	defer bot.Stop()
	if err := bot.WaitHealthy(addr, time.Minute, 100*time.Millisecond); err != nil {
		return err
	}

	elapsed, errs := o.burst(tg, ids)
	if len(errs) > 0 {
		return fmt.Errorf("%w (log: %s)", errors.Join(errs[:min(len(errs), 5)]...), bot.LogName())
	}
	stats, err := scrape(addr)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	o.printRow(tg, elapsed, stats)
	return nil
}

// reply is the model: it writes each answer in pieces, words with
// Markdown, some left open across pieces, then the marker of the question
// it answers.
func (o options) reply(req llmtest.Request) llmtest.Reply {
	n := "0"
	if m := question.FindAllStringSubmatch(string(req.Body), -1); len(m) > 0 {
		n = m[len(m)-1][1]
	}
	k, _ := strconv.Atoi(n)
	chunks := make([]string, 0, o.pieces+1)
	for i := range o.pieces {
		switch i % 6 {
		case 0:
			chunks = append(chunks, fmt.Sprintf("**step %d", i))
		case 1:
			chunks = append(chunks, " done** and ")
		case 2:
			chunks = append(chunks, "`code")
		case 3:
			chunks = append(chunks, " here` then ")
		default:
			chunks = append(chunks, fmt.Sprintf("word%d ", i))
		}
	}
	chunks = append(chunks, done(k))
	return llmtest.Reply{Chunks: chunks, ChunkDelay: o.gap}
}

// chatIDs are the chats of the burst, the first o.groups of them groups,
// and the users allowed (one per chat).
func (o options) chatIDs() (ids []int64, users []string) {
	ids = make([]int64, o.chats)
	users = make([]string, o.chats)
	for i := range ids {
		user := int64(1000 + i)
		users[i] = strconv.FormatInt(user, 10)
		ids[i] = user // a private chat has its user's id
		if i < o.groups {
			ids[i] = -1_000_000 - int64(i)
		}
	}
	return ids, users
}

// burst is the benchmark: every chat asks at once, and asks again as soon
// as its answer is complete. It returns the time until the last chat had
// its last answer, and the chats that waited in vain.
func (o options) burst(tg *telegramtest.Fake, ids []int64) (time.Duration, []error) {
	start := time.Now()
	var (
		wg      sync.WaitGroup
		lastMu  sync.Mutex
		last    time.Time
		errs    []error
		timeout = time.Duration(o.answers)*(time.Duration(o.pieces)*o.gap+time.Minute) + 5*time.Minute
	)
	for i, chat := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := int64(1000 + i)
			for k := 1; k <= o.answers; k++ {
				text := fmt.Sprintf("question %d", k)
				if chat < 0 {
					text = "@" + telegramtest.DefaultUsername + " " + text
				}
				tg.Message(chat, user, text)
				if err := waitFinal(tg, chat, done(k), timeout); err != nil {
					lastMu.Lock()
					errs = append(errs, fmt.Errorf("chat %d answer %d: %w", chat, k, err))
					lastMu.Unlock()
					return
				}
			}
			lastMu.Lock()
			if now := time.Now(); now.After(last) {
				last = now
			}
			lastMu.Unlock()
		}()
	}
	wg.Wait()
	return last.Sub(start), errs
}

// printRow prints the table row: the 429s, the time the burst took
// against the model's own, the messages and updates sent, and what the
// bot's queues coalesced (stats, its metrics). The metrics go to stderr.
func (o options) printRow(tg *telegramtest.Fake, elapsed time.Duration, stats map[string]float64) {
	var edits, draftCalls, sends, refused int
	for _, r := range tg.Requests() {
		switch r.Method {
		case "editMessageText":
			edits++
		case "sendMessageDraft":
			draftCalls++
		case "sendMessage":
			sends++
		}
		if r.Status == http.StatusTooManyRequests {
			refused++
		}
	}
	tooChats, most := tg.TooManyChats()
	floor := time.Duration(o.answers) * time.Duration(o.pieces) * o.gap
	mode := "edits"
	if o.drafts {
		mode = "drafts in private chats"
	}
	if !o.stream {
		mode = "STREAM_REPLIES=false"
	}
	fmt.Printf("| %d chats (%d groups) × %d, %s | %d (%d chats, at most %d in one) | %.1f s (model alone: %.1f s) | %d sendMessage, %d edits, %d drafts | %d coalesced |\n",
		o.chats, o.groups, o.answers, mode, refused, tooChats, most, elapsed.Seconds(), floor.Seconds(),
		sends, edits, draftCalls, int(stats["volcanicbot_telegram_coalesced_total"]))
	fmt.Fprintf(os.Stderr, "sender: %v\n", stats)
}

// waitFinal waits until chat has a message holding marker.
func waitFinal(tg *telegramtest.Fake, chat int64, marker string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, m := range tg.Sent(chat) {
			if !m.Deleted && strings.Contains(m.Text, marker) {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("no final answer in time")
}

// scrape reads the bot's volcanicbot_telegram_* metrics.
func scrape(addr string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "volcanicbot_telegram_") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		out[name] = v
	}
	return out, sc.Err()
}
