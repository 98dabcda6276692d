package bot

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// journaledBot is a bot against fake with the update journal in dir.
func journaledBot(t *testing.T, fake *telegramtest.Fake, dir string) *harness {
	t.Helper()
	return buildBot(t, fake, func(o *testOptions) {
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
