package bot

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// lateAnswer is a Bot API whose answer to sendMessage comes back only after
// the call's caller gave up (cut): Telegram has the message, the bot is
// being told of it when a /stop or a shutdown comes.
type lateAnswer struct {
	next http.RoundTripper
	cut  context.CancelFunc
}

func (l lateAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/sendMessage") {
		return resp, err
	}
	l.cut()
	select {
	case <-req.Context().Done(): // the answer never reaches the bot
		resp.Body.Close()
		return nil, req.Context().Err()
	case <-time.After(time.Second):
		return resp, nil
	}
}

// A question whose turn ends while Telegram takes it is closed like any
// other: its buttons go, its outcome shows. (A shutdown cut the send short:
// the bot never learnt the message's id, and the question kept live
// buttons in the chat — TestE2EApprovalExpiresWithARestart, 1 run in 2
// under load.)
func TestAskEndedWhileSentIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := startBubbleBot(t, func(o *testOptions) {
			o.HTTPClient = &http.Client{Transport: lateAnswer{next: o.HTTPClient.Transport, cut: cancel}}
		})
		_, err := h.bot.Chat().Ask(ctx, chat.In(alice), Question{Text: "Go on?", Buttons: [][]Button{{{Label: "Yes", Choice: "yes"}}}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ask = %v, want context.Canceled", err)
		}
		time.Sleep(telegram.DefaultLimits.ChatEvery) // the closing edit is queued behind the chat's pace
		synctest.Wait()
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || sent[0].Keyboard != nil || sent[0].Text != "Go on?\n\n→ Cancelled." {
			t.Fatalf("sent %+v, want the question closed as cancelled", sent)
		}
	})
}
