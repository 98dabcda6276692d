package bot

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestNewDoesNoIO(t *testing.T) {
	h := newBot(t, nil)
	if reqs := h.fake.Requests(); len(reqs) != 0 {
		t.Errorf("New made %d requests", len(reqs))
	}
	if !h.tg.LastPoll().IsZero() {
		t.Error("LastPoll is set before any poll")
	}
}

func TestRunStartsAndStops(t *testing.T) {
	h := newBot(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.bot.Run(ctx) }()
	if _, err := h.fake.WaitFor("getUpdates", 1, waitLong); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range h.fake.Requests() {
		order = append(order, r.Method)
	}
	if strings.Join(order, " ") != "getMe deleteWebhook setMyCommands getUpdates" {
		t.Errorf("requests %v", order)
	}
	if gu := h.fake.RequestsFor("getUpdates")[0]; gu.Params["timeout"] != "59" || !strings.Contains(gu.Params["allowed_updates"], "message") {
		t.Errorf("getUpdates params %v", gu.Params)
	}
	if h.tg.LastPoll().IsZero() {
		t.Error("LastPoll not set after the start-up calls succeeded")
	}
	before := time.Now()
	h.fake.Message(alice, alice, "hi")
	h.sess.waitCalls(t, "deliver", 1)
	if lp := h.tg.LastPoll(); lp.Before(before) {
		t.Errorf("LastPoll %v, want after %v", lp, before)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(waitLong):
		t.Fatal("Run did not return")
	}
	if err := h.bot.Run(context.Background()); err == nil {
		t.Error("a second Run did not fail")
	}
}

func TestRunRetriesStartup(t *testing.T) {
	h := newBot(t, nil)
	h.fake.FailNext("getMe", http.StatusBadGateway, "", 0)
	h.fake.FailNext("deleteWebhook", http.StatusTooManyRequests, "", 1)
	h.fake.FailNext("setMyCommands", http.StatusBadRequest, "Bad Request: BOT_COMMAND_INVALID", 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.bot.Run(ctx) }()
	if _, err := h.fake.WaitFor("getUpdates", 1, waitLong); err != nil {
		t.Fatalf("%v; log:\n%s", err, h.logs)
	}
	if !strings.Contains(h.logs.String(), "could not publish the command list") {
		t.Errorf("setMyCommands failure not logged:\n%s", h.logs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestRunRefusedToken(t *testing.T) {
	fake := telegramtest.New(t)
	token := "987654321:AAThisIsTheWrongTokenXYZ"
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, b := newTestBot(t, testOptions{Options: Options{Sessions: newFakeSessions(), Logger: logger},
		tgOptions: tgOptions{Token: token, APIURL: fake.URL(), Logger: logger, Sleep: (&sleeps{}).sleep}})
	err := b.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
		t.Fatalf("Run = %v, want the token refused", err)
	}
	if strings.Contains(err.Error(), "ThisIsTheWrongToken") || strings.Contains(logs.String(), "ThisIsTheWrongToken") {
		t.Errorf("the token leaked: %v\n%s", err, logs)
	}
	if len(fake.RequestsFor("getMe")) != 1 {
		t.Error("a 401 was retried")
	}
}

func TestNewWithoutSessions(t *testing.T) {
	tg, err := telegram.New(telegram.Options{Token: "1:x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Telegram: tg}); err == nil || !strings.Contains(err.Error(), "Sessions") {
		t.Errorf("New = %v", err)
	}
}

func TestTokenNeverLogged(t *testing.T) {
	synctest.Test(t, testTokenNeverLogged) // the chat's retries back off on the bubble's clock
}

func testTokenNeverLogged(t *testing.T) {
	const token = "555:AASecretPartOfTheTokenQQQ"
	for _, apiURL := range []string{"http://127.0.0.1:1"} {
		logs := &testkit.SyncBuffer{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		_, b := newTestBot(t, testOptions{Options: Options{Sessions: newFakeSessions(), Logger: logger},
			tgOptions: tgOptions{Token: token, APIURL: apiURL, Logger: logger, Sleep: (&sleeps{}).sleep}})
		sendErr := b.Chat().SendText(context.Background(), chat.In(alice), "hello")
		runErr := b.Run(context.Background())
		all := logs.String() + "\n" + sendErr.Error() + "\n" + runErr.Error()
		if strings.Contains(all, "SecretPartOfTheToken") {
			t.Errorf("%s: the token leaked:\n%s", apiURL, all)
		}
		if !strings.Contains(logs.String(), "message not delivered") || !strings.Contains(logs.String(), "chat=1001") {
			t.Errorf("%s: failure not logged:\n%s", apiURL, logs)
		}
	}
}
