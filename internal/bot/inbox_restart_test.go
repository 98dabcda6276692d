package bot

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// journaledBot is a bot against fake with the update journal in dir.
func journaledBot(t *testing.T, fake *telegramtest.Fake, dir string) *harness {
	t.Helper()
	return buildBot(t, fake, func(o *Options) {
		o.HTTPClient = fake.Client()
		o.InboxDir = dir
	})
}

// inProcessFake is an in-process fake Bot API for another token.
func inProcessFake(t *testing.T, token string) *telegramtest.Fake {
	t.Helper()
	f := telegramtest.Start(telegramtest.Options{InProcess: true, Token: token})
	t.Cleanup(f.Close)
	return f
}

// Update ids start again (a new fake Bot API on the same data directory,
// or Telegram after a week without updates): a new update whose id the
// journal still holds from the last run is a new message, handled, and the
// log says the ids restarted. Before, the journal took it for the old
// update sent again and dropped it with a debug line ("hello four" and the
// three after it were lost).
func TestInboxTakesARestartedIDSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		old := telegramtest.NewInProcess(t)
		first := journaledBot(t, old, dir)
		stop := first.run(t)
		synctest.Wait()
		for _, text := range []string{"hello one", "hello two", "hello three"} {
			old.Message(alice, alice, text)
			synctest.Wait()
		}
		stop() // the long poll that would confirm the last one is cut
		if got := first.sess.callsWith("deliver"); len(got) != 3 {
			t.Fatalf("first run delivered %q", got)
		}

		fresh := telegramtest.NewInProcess(t) // update ids start at 1 again
		second := journaledBot(t, fresh, dir)
		second.run(t)
		synctest.Wait()
		texts := []string{"hello four", "hello five", "hello six", "hello seven"}
		for _, text := range texts {
			fresh.Message(alice, alice, text)
		}
		synctest.Wait()
		var want []string
		for _, text := range texts {
			want = append(want, "deliver 1001 "+text)
		}
		if got := second.sess.callsWith("deliver"); !slices.Equal(got, want) {
			t.Errorf("second run delivered %q, want %q; log:\n%s", got, want, second.logs)
		}
		if !strings.Contains(second.logs.String(), "update ids restarted") {
			t.Errorf("no word in the log about the restarted ids:\n%s", second.logs)
		}
	})
}

// A new bot token on the same data directory: the journal of the other
// bot neither swallows the new bot's updates (its ids start on their own)
// nor has the new bot answer what was sent to the old one; that is
// dropped with a warning naming how many.
func TestInboxKeysUpdatesByBot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		old := telegramtest.NewInProcess(t)
		first := journaledBot(t, old, dir)
		first.sess.holdTaken = true // a long turn: the last two wait
		stop := first.run(t)
		synctest.Wait()
		old.Message(alice, alice, "to the old bot")
		old.Message(alice, alice, "to the old bot, again")
		synctest.Wait()
		stop()

		other := inProcessFake(t, "987654321:AAOtherTokenForVolcanicbotTests_01234")
		second := journaledBot(t, other, dir)
		second.run(t)
		synctest.Wait()
		other.Message(alice, alice, "to the new bot")
		other.Message(alice, alice, "to the new bot, again")
		synctest.Wait()
		want := []string{"deliver 1001 to the new bot", "deliver 1001 to the new bot, again"}
		if got := second.sess.callsWith("deliver"); !slices.Equal(got, want) {
			t.Errorf("new bot delivered %q, want %q; log:\n%s", got, want, second.logs)
		}
		if !strings.Contains(second.logs.String(), "level=WARN") || !strings.Contains(second.logs.String(), "another bot") {
			t.Errorf("the old bot's two messages were dropped without a warning:\n%s", second.logs)
		}
	})
}

// Only what Telegram can really send again is taken for a copy: the same
// bot's update, not yet confirmed, within the day Telegram keeps it, and
// the same update (whatever its spacing or key order). Anything else with
// a journaled id is a new update.
func TestInboxRecognisesWhatCanRepeat(t *testing.T) {
	const first = `{"update_id":7,"message":{"message_id":1,"date":100,"chat":{"id":1,"type":"private"},"text":"hi"}}`
	cases := []struct {
		name    string
		confirm bool          // Telegram confirmed the first one
		later   time.Duration // the second arrives this much later
		second  string
		again   bool // taken for the first sent again
	}{
		{name: "sent again", second: first, again: true},
		{name: "sent again, keys in another order", again: true,
			second: `{"message":{"text":"hi","chat":{"type":"private","id":1},"date":100,"message_id":1}, "update_id":7}`},
		{name: "another message, the same id", second: `{"update_id":7,"message":{"message_id":1,"date":200,"chat":{"id":1,"type":"private"},"text":"hello four"}}`},
		{name: "after Telegram confirmed it", confirm: true, second: first},
		{name: "after the day Telegram keeps it", later: telegramKeeps + time.Minute, second: first},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			var logs logBuffer
			in := newInbox(t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil)))
			in.now = func() time.Time { return now }
			if err := in.open(testBotID); err != nil {
				t.Fatal(err)
			}
			defer in.close()
			if n, err := in.journal([]json.RawMessage{json.RawMessage(first)}); n != 1 || err != nil {
				t.Fatalf("journal = %d, %v", n, err)
			}
			key, _ := in.claim(7)
			in.done(key)
			if tc.confirm {
				in.confirm(8)
			}
			now = now.Add(tc.later)
			n, err := in.journal([]json.RawMessage{json.RawMessage(tc.second)})
			if err != nil {
				t.Fatal(err)
			}
			_, claimed := in.claim(7)
			if tc.again && (n != 0 || claimed) {
				t.Errorf("a copy sent again was journaled (%d) or handed out again (%v)", n, claimed)
			}
			if !tc.again && (n != 1 || !claimed) {
				t.Errorf("a new update was taken for a copy: journaled %d, claimed %v", n, claimed)
			}
		})
	}
}

// A done update Telegram never confirmed (its ids restarted below it) is
// forgotten once Telegram cannot send it any more, and the journal of an
// older version (no keys, no bot, done marks by update id) is read.
func TestInboxForgetsWhatCannotComeBackAndReadsOldJournals(t *testing.T) {
	dir := t.TempDir()
	old := `{"id":5,"update":{"update_id":5,"message":{"message_id":5,"date":1,"chat":{"id":1,"type":"private"},"text":"done"}}}
{"id":6,"update":{"update_id":6,"message":{"message_id":6,"date":1,"chat":{"id":1,"type":"private"},"text":"waiting"}}}
{"done":[5]}
`
	path := filepath.Join(dir, inboxFile)
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	in := newInbox(dir, slog.New(slog.DiscardHandler))
	in.now = func() time.Time { return now }
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	defer in.close()
	kept := in.replay()
	if len(kept) != 1 || kept[0].update.Message.Text != "waiting" {
		t.Fatalf("replayed %+v, want the waiting one", kept)
	}
	in.done(kept[0].key) // done, never confirmed
	now = now.Add(telegramKeeps)
	raw := json.RawMessage(`{"update_id":1,"message":{"message_id":1,"date":2,"chat":{"id":1,"type":"private"},"text":"new"}}`)
	if n, _ := in.journal([]json.RawMessage{raw}); n != 1 {
		t.Fatal("a new update was not journaled")
	}
	key, _ := in.claim(1)
	in.done(key)
	in.confirm(2)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("journal after a day: %v, %d bytes; want it empty", err, fi.Size())
	}
}
