package telegram

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// testBotID is the bot of telegramtest's default token.
const testBotID = 123456789

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
			clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
			var logs testkit.SyncBuffer
			in := newInbox(t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil)))
			in.now = clock.Now
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
			clock.Advance(tc.later)
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
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	in := newInbox(dir, slog.New(slog.DiscardHandler))
	in.now = clock.Now
	if err := in.open(testBotID); err != nil {
		t.Fatal(err)
	}
	defer in.close()
	kept := in.replay()
	if len(kept) != 1 || kept[0].update.Message.Text != "waiting" {
		t.Fatalf("replayed %+v, want the waiting one", kept)
	}
	in.done(kept[0].key) // done, never confirmed
	clock.Advance(telegramKeeps)
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
