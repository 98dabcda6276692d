package bot

import (
	"encoding/json"
	"fmt"
	"log/slog"
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

// testBotID is the bot of telegramtest's default token.
const testBotID = 123456789

// A message Telegram was told the bot received, but that its chat had not
// taken yet (a turn ran before it), is handed in again by the next run, in
// order and once: also when Telegram sends it again because the last run
// never confirmed it. A command the last run had handled is not run again.
func TestInboxHandsInWhatTheLastRunLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		fake := telegramtest.NewInProcess(t)
		withInbox := func(o *Options) {
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
		if err := first.bot.Close(); err != nil {
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
		in := newInbox(dir, slog.New(slog.DiscardHandler))
		if err := in.open(testBotID); err != nil {
			t.Fatal(err)
		}
		fake := telegramtest.NewInProcess(t)
		var raws []json.RawMessage
		for i, text := range []string{"before", "/new", "after"} {
			u := updateOf(fake.NewMessage(alice, alice, text))
			u.ID = int64(900 + i)
			raw, _ := json.Marshal(u)
			raws = append(raws, raw)
		}
		if n, err := in.journal(raws); n != 3 || err != nil {
			t.Fatalf("journal = %d, %v", n, err)
		}
		in.close()

		h := buildBot(t, fake, func(o *Options) { o.HTTPClient = fake.Client(); o.InboxDir = dir })
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
	h, _ := webhookBot(t, func(o *Options) { o.InboxDir = dir })
	h.sess.holdTaken = true
	stop := h.run(t)
	waitHealthy(t, h)
	h.fake.Message(alice, alice, "by webhook")
	h.sess.waitCalls(t, "deliver", 1)
	if _, err := h.fake.WaitFor("webhook", 1, waitLong); err != nil {
		t.Fatal(err)
	}
	stop()
	h.bot.Close()
	in := newInbox(dir, slog.New(slog.DiscardHandler))
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	defer in.close()
	kept := in.replay()
	if len(kept) != 1 || kept[0].update.Message == nil || kept[0].update.Message.Text != "by webhook" {
		t.Errorf("journal holds %+v", kept)
	}
}

// The journal's mechanics: a torn last record is cut off, an update is
// claimed once, done and confirmed updates are forgotten and the file is
// emptied, and a large journal of mostly finished updates is rewritten
// with the rest.
func TestInboxJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, inboxFile)
	raw := func(id int64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,"chat":{"id":1,"type":"private"},"text":"m%d"}}`, id, id, id))
	}
	in := newInbox(dir, slog.New(slog.DiscardHandler))
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	if n, err := in.journal([]json.RawMessage{raw(1), raw(2), raw(2), raw(3)}); n != 3 || err != nil {
		t.Fatalf("journal = %d, %v", n, err)
	}
	if n, _ := in.journal([]json.RawMessage{raw(1)}); n != 0 {
		t.Error("an update sent again was journaled again")
	}
	k1, ok1 := in.claim(1)
	if _, again := in.claim(1); !ok1 || again {
		t.Error("claim: want the first true, the second false")
	}
	in.done(k1)
	in.close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":4,"upd`) // torn
	f.Close()

	in = newInbox(dir, slog.New(slog.DiscardHandler))
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	var ids, keys []int64
	for _, u := range in.replay() {
		ids, keys = append(ids, u.update.ID), append(keys, u.key)
	}
	if !slices.Equal(ids, []int64{2, 3}) {
		t.Errorf("replayed %v, want [2 3]", ids)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), `"upd`+"\n") || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("the torn record is still there:\n%s", b)
	}
	_, again2 := in.claim(2)
	_, again1 := in.claim(1)
	if again2 || again1 {
		t.Error("a replayed or done update was claimed again")
	}
	in.done(keys...)
	if fi, _ := os.Stat(path); fi.Size() == 0 {
		t.Error("emptied before Telegram confirmed the updates")
	}
	in.confirm(4)
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("journal of %d bytes once all is done and confirmed", fi.Size())
	}

	// Many finished updates and one still waiting: rewritten, the waiting
	// one kept.
	var batch []json.RawMessage
	for id := int64(10); id < 10+inboxCompactAt/100; id++ {
		batch = append(batch, raw(id))
	}
	if _, err := in.journal(batch); err != nil {
		t.Fatal(err)
	}
	for id := int64(11); id < 10+inboxCompactAt/100; id++ {
		key, _ := in.claim(id)
		in.done(key)
	}
	in.confirm(1 << 40)
	fi, _ := os.Stat(path)
	if fi.Size() > 4096 {
		t.Errorf("journal of %d bytes for one waiting update", fi.Size())
	}
	in.close()
	in = newInbox(dir, slog.New(slog.DiscardHandler))
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	defer in.close()
	if kept := in.replay(); len(kept) != 1 || kept[0].update.ID != 10 {
		t.Errorf("after the rewrite: %+v", kept)
	}
}

// More messages kept for one chat than its queue takes at once are all
// handed in: they were accepted under the cap once already.
func TestInboxHandsInABacklogLongerThanTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		in := newInbox(dir, slog.New(slog.DiscardHandler))
		if err := in.open(testBotID); err != nil {
			t.Fatal(err)
		}
		fake := telegramtest.NewInProcess(t)
		var raws []json.RawMessage
		n := maxChatQueue + 44
		for i := range n {
			u := updateOf(fake.NewMessage(alice, alice, fmt.Sprintf("m%d", i)))
			u.ID = int64(1000 + i)
			raw, _ := json.Marshal(u)
			raws = append(raws, raw)
		}
		if _, err := in.journal(raws); err != nil {
			t.Fatal(err)
		}
		in.close()
		h := buildBot(t, fake, func(o *Options) { o.HTTPClient = fake.Client(); o.InboxDir = dir })
		h.run(t)
		synctest.Wait()
		got := h.sess.callsWith("deliver")
		if len(got) != n || got[n-1] != fmt.Sprintf("deliver 1001 m%d", n-1) {
			t.Errorf("%d of %d delivered, the last %q", len(got), n, got[len(got)-1:])
		}
	})
}
