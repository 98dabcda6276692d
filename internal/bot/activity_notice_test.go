package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// A notice of the turn's own (a summary was made) is a line of the
// progress message, among the tool calls, redacted; the message goes when
// the turn ends, as it does with tool calls only.
func TestProgressNotice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, func(o *testOptions) { o.Redactor = replacer{strings.NewReplacer("s3cret", "[redacted]")} })
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(alice))
		n, ok := a.(session.NoticeActivity)
		if !ok {
			t.Fatal("the bot's activity does not show notices")
		}
		n.Notice("📝 summarised the earlier conversation (12 messages) s3cret")
		synctest.Wait()
		msgs := h.fake.Sent(alice)
		if len(msgs) != 1 || msgs[0].Text != "📝 summarised the earlier conversation (12 messages) [redacted]" {
			t.Fatalf("progress %+v", msgs)
		}
		a.ToolCall("echo", json.RawMessage(`{}`))
		a.Done()
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || !sent[0].Deleted {
			t.Errorf("progress message %+v, want one, deleted", sent)
		}
	})
}
