package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// inboxFile is the update journal in the inbox folder.
const inboxFile = "updates.jsonl"

// pollTimeout is the client's long poll (a getUpdates returns after it).
const pollTimeout = 60 * time.Second

// seedInbox writes updates to the journal in dir as a run that had not
// handed them to their chats would have left them (in the lines of an
// older version, which every version reads).
func seedInbox(t *testing.T, dir string, raws []json.RawMessage) {
	t.Helper()
	var b strings.Builder
	for _, raw := range raws {
		var u struct {
			ID int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		line, err := json.Marshal(map[string]any{"id": u.ID, "update": raw})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, inboxFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A message Telegram was told the bot received, but that its chat had not
// taken yet (a turn ran before it), is handed in again by the next run, in
// order and once: also when Telegram sends it again because the last run
// never confirmed it. A command the last run had handled is not run again.
func TestInboxHandsInWhatTheLastRunLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := telegramtest.NewInProcess(t)
		withInbox := func(o *testOptions) {
			o.HTTPClient = fake.Client()
			o.InboxDir = dir
		}
		first := buildBot(t, fake, withInbox)
		first.sess.holdTaken = true // a long turn runs before them
		stop := first.run(t)
		synctest.Wait()                                           // polling
		fake.FailNext("getUpdates", http.StatusBadGateway, "", 0) // the poll after these does not confirm them
		// In one poll's answer: queued one by one, the poll waiting now
		// could return with "one" alone, and the next (the failed one)
		// would leave the rest to a third.
		fake.SendAll(updateOf(fake.NewMessage(alice, alice, "one")), updateOf(fake.NewMessage(alice, alice, "/stop")),
			updateOf(fake.NewMessage(alice, alice, "two")))
		synctest.Wait()
		if got := first.sess.Calls(); !slices.Equal(got, []string{"deliver 1001 one", "stop 1001", "deliver 1001 two"}) {
			t.Fatalf("first run: %q", got)
		}
		stop() // killed, as far as the chat's turn is concerned: nothing was taken
		if err := first.tg.Close(); err != nil {
			t.Fatal(err)
		}
		if n := fake.Unconfirmed(); n != 3 {
			t.Fatalf("%d updates unconfirmed, want 3", n)
		}

		second := buildBot(t, fake, withInbox)
		second.run(t)
		synctest.Wait() // the replay, then Telegram sends the three again
		fake.Message(alice, alice, "three")
		synctest.Wait()
		want := []string{"deliver 1001 one", "deliver 1001 two", "deliver 1001 three"}
		if got := second.sess.Calls(); !slices.Equal(got, want) {
			t.Errorf("second run: %q, want %q", got, want)
		}
		if n := fake.Unconfirmed(); n != 0 {
			t.Errorf("%d updates unconfirmed", n)
		}
		time.Sleep(pollTimeout) // the long poll that confirmed them returns
		synctest.Wait()
		// Everything was taken and confirmed: the journal is empty again.
		if fi, err := os.Stat(filepath.Join(dir, inboxFile)); err != nil || fi.Size() != 0 {
			t.Errorf("journal: %v, %v bytes", err, fi.Size())
		}
	})
}

// A command the last run had not finished is not run again (a /new or
// /stop from before a restart would act on a conversation the user has
// moved on from); the messages around it are delivered.
func TestInboxDoesNotRunCommandsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := telegramtest.NewInProcess(t)
		var raws []json.RawMessage
		for i, text := range []string{"before", "/new", "after"} {
			u := updateOf(fake.NewMessage(alice, alice, text))
			u.ID = int64(900 + i)
			raw, _ := json.Marshal(u)
			raws = append(raws, raw)
		}
		seedInbox(t, dir, raws)

		h := buildBot(t, fake, func(o *testOptions) { o.HTTPClient = fake.Client(); o.InboxDir = dir })
		h.run(t)
		synctest.Wait()
		if got := h.sess.Calls(); !slices.Equal(got, []string{"deliver 1001 before", "deliver 1001 after"}) {
			t.Errorf("calls = %q", got)
		}
		if !strings.Contains(h.logs.String(), "not run again") {
			t.Errorf("no word in the log about the command:\n%s", h.logs)
		}
	})
}

// In webhook mode the update is journaled before the bot answers 200.
func TestWebhookJournalsBeforeTheOK(t *testing.T) {
	dir := t.TempDir()
	h, _ := webhookBot(t, func(o *testOptions) { o.InboxDir = dir })
	h.sess.holdTaken = true
	stop := h.run(t)
	waitHealthy(t, h)
	h.fake.Message(alice, alice, "by webhook")
	h.sess.waitCalls(t, "deliver", 1)
	if _, err := h.fake.WaitFor("webhook", 1, waitLong); err != nil {
		t.Fatal(err)
	}
	stop()
	// The next run hands it in again: it was journaled.
	next, _ := webhookBot(t, func(o *testOptions) { o.InboxDir = dir })
	next.run(t)
	if got := next.sess.waitCalls(t, "deliver", 1); got[0] != "deliver 1001 by webhook" {
		t.Errorf("the next run delivered %q", got)
	}
}

// More messages kept for one chat than its queue takes at once are all
// handed in: they were accepted under the cap once already.
func TestInboxHandsInABacklogLongerThanTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := telegramtest.NewInProcess(t)
		var raws []json.RawMessage
		n := maxChatQueue + 44
		for i := range n {
			u := updateOf(fake.NewMessage(alice, alice, fmt.Sprintf("m%d", i)))
			u.ID = int64(1000 + i)
			raw, _ := json.Marshal(u)
			raws = append(raws, raw)
		}
		seedInbox(t, dir, raws)
		h := buildBot(t, fake, func(o *testOptions) { o.HTTPClient = fake.Client(); o.InboxDir = dir })
		h.run(t)
		synctest.Wait()
		got := h.sess.callsWith("deliver")
		if len(got) != n || got[n-1] != fmt.Sprintf("deliver 1001 m%d", n-1) {
			t.Errorf("%d of %d delivered, the last %q", len(got), n, got[len(got)-1:])
		}
	})
}
