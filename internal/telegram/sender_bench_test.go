package telegram

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// BenchmarkSenderBurst is issue 13's benchmark for the sender: a burst of
// SENDER_CHATS chats (default 200) × SENDER_ANSWERS streamed answers (5) at once,
// against the fake Bot API enforcing Telegram's limits (one call a second
// in a chat, thirty a second in all) with 429s and retry_after. An
// answer is a message sent, then edited with a newer text every 200 ms
// for 2 s as a model would stream it (each edit queued with the answer's
// key, so a newer one replaces one still waiting), then its final text,
// whose delivery is waited for.
//
// It reports the 429s the bot received (and in how many chats), the time
// until every final text was delivered, the answers' calls made, and the
// stream edits sent and coalesced. Sub-benchmark "paced" is the sender;
// "unpaced" lifts the bot's limits (every call goes at once, a 429 holds
// the chat until retry_after): what a bot without pacing gets.
//
//	go test -run '^$' -bench SenderBurst -benchtime 1x ./internal/telegram
func BenchmarkSenderBurst(b *testing.B) {
	chats := envInt("SENDER_CHATS", 200)
	answers := envInt("SENDER_ANSWERS", 5)
	for _, mode := range []struct {
		name   string
		limits Limits
	}{
		{"paced", Limits{}},
		{"unpaced", Limits{ChatEvery: time.Nanosecond, GroupPerMinute: 1 << 30, PerSecond: 1 << 30}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				r := senderBurst(b, mode.limits, chats, answers)
				b.ReportMetric(float64(r.tooMany), "429s")
				b.ReportMetric(float64(r.tooManyChats), "chats-with-429")
				b.ReportMetric(r.allFinals.Seconds(), "s-to-all-finals")
				b.ReportMetric(r.p50.Seconds(), "s-final-p50")
				b.ReportMetric(r.p99.Seconds(), "s-final-p99")
				b.ReportMetric(float64(r.editsSent), "edits-sent")
				b.ReportMetric(float64(r.coalesced), "edits-coalesced")
				b.ReportMetric(float64(r.lost), "finals-lost")
				b.ReportMetric(float64(r.notFinal), "messages-not-final")
				b.Logf("%s: %d chats × %d answers: %d 429s in %d chats (at most %d in one), every final in %v (p50 %v, p99 %v); "+
					"%d sendMessage, %d edits sent (%d with a 429), %d coalesced; %d finals lost, %d messages not showing their final text",
					mode.name, chats, answers, r.tooMany, r.tooManyChats, r.most, r.allFinals.Round(time.Millisecond),
					r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.sends, r.editsSent, r.edits429, r.coalesced, r.lost, r.notFinal)
			}
		})
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

type burstResult struct {
	tooMany, tooManyChats, most int
	allFinals, p50, p99         time.Duration
	sends, editsSent, edits429  int
	coalesced                   int64
	lost, notFinal              int
}

// Of one streamed answer.
const (
	streamEdits = 10
	streamEvery = 200 * time.Millisecond
)

func senderBurst(b *testing.B, limits Limits, chats, answers int) burstResult {
	fake := telegramtest.Start(telegramtest.Options{}) // Telegram's limits
	defer fake.Close()
	users := make([]int64, chats)
	for i := range users {
		users[i] = int64(i + 1)
	}
	c, err := New(Options{Token: fake.Token(), APIURL: fake.URL(), Limits: limits})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	var mu sync.Mutex
	var finals []time.Duration
	lost := 0
	start := time.Now()
	var wg sync.WaitGroup
	for _, chat := range users {
		wg.Go(func() {
			for a := range answers {
				m, err := Send(ctx, c, chat, "sendMessage", Paced, func(ctx context.Context) (*models.Message, error) {
					return c.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: chat, Text: fmt.Sprintf("answer %d: …", a)})
				})
				if err != nil {
					mu.Lock()
					lost++
					mu.Unlock()
					continue
				}
				key := "stream:" + strconv.Itoa(m.ID)
				edit := func(text string) <-chan error {
					return c.Submit(ctx, chat, "editMessageText", Paced, key, func(ctx context.Context) error {
						_, err := c.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{ChatID: chat, MessageID: m.ID, Text: text})
						return err
					})
				}
				text := fmt.Sprintf("answer %d:", a)
				for k := range streamEdits {
					time.Sleep(streamEvery)
					text += fmt.Sprintf(" part %d", k)
					edit(text + " …")
				}
				err = <-edit(text + " (final)")
				mu.Lock()
				if err != nil {
					lost++
				} else {
					finals = append(finals, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r := burstResult{allFinals: time.Since(start), lost: lost}
	r.tooManyChats, r.most = fake.TooManyChats()
	for _, req := range fake.Requests() {
		switch req.Method {
		case "sendMessage":
			r.sends++
		case "editMessageText":
			r.editsSent++
			if req.Status == 429 {
				r.edits429++
			}
		}
		if req.Status == 429 {
			r.tooMany++
		}
	}
	r.coalesced = c.Stats().Coalesced
	if len(finals) > 0 {
		slices.Sort(finals)
		r.p50, r.p99 = finals[len(finals)/2], finals[len(finals)*99/100]
	}
	// Every answer's message shows its final text.
	wrong := 0
	for _, chat := range users {
		for _, m := range fake.Sent(chat) {
			if !strings.HasSuffix(m.Text, "(final)") {
				wrong++
			}
		}
	}
	r.notFinal = wrong
	if wrong > 0 && limits == (Limits{}) {
		b.Errorf("paced: %d messages do not show their final text", wrong)
	}
	return r
}
