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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

func main() {
	bin := flag.String("bin", "bin/volcanicbot", "the volcanicbot binary")
	chats := flag.Int("chats", 200, "chats in the burst")
	answers := flag.Int("answers", 5, "answers each chat asks for, one after the other")
	groups := flag.Int("groups", 0, "how many of the chats are groups (the others are private)")
	drafts := flag.Bool("drafts", false, "the fake Bot API takes sendMessageDraft (private chats stream as drafts)")
	pieces := flag.Int("pieces", 30, "pieces of text in each answer")
	gap := flag.Duration("gap", 100*time.Millisecond, "the model's pause between pieces")
	stream := flag.Bool("stream", true, "STREAM_REPLIES")
	flag.Parse()
	if err := run(*bin, *chats, *answers, *groups, *pieces, *gap, *drafts, *stream); err != nil {
		fmt.Fprintln(os.Stderr, "stream-burst:", err)
		os.Exit(1)
	}
}

// done marks the end of an answer: the last piece, without a space after
// it, so that no streamed update shows it (the bot shows whole words).
func done(n int) string { return fmt.Sprintf("[done-%d]", n) }

var question = regexp.MustCompile(`question (\d+)`)

func run(bin string, chats, answers, groups, pieces int, gap time.Duration, drafts, stream bool) error {
	tg := telegramtest.Start(telegramtest.Options{NoDrafts: !drafts})
	defer tg.Close()
	var failures []string
	var mu sync.Mutex
	// The model writes each answer in pieces: words with Markdown, some
	// left open across pieces, then the marker of the question it
	// answers.
	model := llmtest.Start(llm.ProviderOpenAI, func(req llmtest.Request) llmtest.Reply {
		n := "0"
		if m := question.FindAllStringSubmatch(string(req.Body), -1); len(m) > 0 {
			n = m[len(m)-1][1]
		}
		k, _ := strconv.Atoi(n)
		chunks := make([]string, 0, pieces+1)
		for i := range pieces {
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
		return llmtest.Reply{Chunks: chunks, ChunkDelay: gap}
	}, func(format string, args ...any) {
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
	ids := make([]int64, chats)
	users := make([]string, chats)
	for i := range ids {
		user := int64(1000 + i)
		users[i] = strconv.FormatInt(user, 10)
		ids[i] = user // a private chat has its user's id
		if i < groups {
			ids[i] = -1_000_000 - int64(i)
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(data, "bot.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "run")
	cmd.Env = []string{
		"HOME=" + data, "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		"TELEGRAM_ALLOWED_USERS=" + strings.Join(users, ","),
		"VOLCANIC_DATA_DIR=" + filepath.Join(data, "data"), "VOLCANIC_AGENT_DIR=" + filepath.Join(data, "agent"),
		"LLM_PROVIDER=openai", "LLM_MODEL=bench", "OPENAI_API_KEY=sk-bench-0123456789", "OPENAI_BASE_URL=" + model.URL,
		"HTTP_ADDR=" + addr, "LOG_FORMAT=json", "LOG_LEVEL=info",
		"STREAM_REPLIES=" + strconv.FormatBool(stream),
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	if err := waitHealthy(addr, time.Minute); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}

	// The burst: every chat asks at once, and asks again as soon as its
	// answer is complete.
	start := time.Now()
	var (
		wg      sync.WaitGroup
		lastMu  sync.Mutex
		last    time.Time
		errs    []error
		timeout = time.Duration(answers)*(time.Duration(pieces)*gap+time.Minute) + 5*time.Minute
	)
	for i, chat := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := int64(1000 + i)
			for k := 1; k <= answers; k++ {
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
	if len(errs) > 0 {
		return fmt.Errorf("%w (log: %s)", errors.Join(errs[:min(len(errs), 5)]...), logFile.Name())
	}
	elapsed := last.Sub(start)
	stats, err := scrape(addr)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}

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
	floor := time.Duration(answers) * time.Duration(pieces) * gap
	mode := "edits"
	if drafts {
		mode = "drafts in private chats"
	}
	if !stream {
		mode = "STREAM_REPLIES=false"
	}
	fmt.Printf("| %d chats (%d groups) × %d, %s | %d (%d chats, at most %d in one) | %.1f s (model alone: %.1f s) | %d sendMessage, %d edits, %d drafts | %d coalesced |\n",
		chats, groups, answers, mode, refused, tooChats, most, elapsed.Seconds(), floor.Seconds(),
		sends, edits, draftCalls, int(stats["volcanicbot_telegram_coalesced_total"]))
	fmt.Fprintf(os.Stderr, "sender: %v\n", stats)
	return nil
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

func waitHealthy(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the bot never became healthy")
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

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
