package bot

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Once the answer is sent the progress message is only deleted: an edit
// that was scheduled for it (a call came within a second of the last
// update) is dropped, not made after the answer — a wasted paced call
// that also held Done back by a second. With the paced sender the
// answer's own send waits for the chat's pace, which is when the edit
// fell due.
func TestNoProgressEditAfterTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name string
		// beforeDone is what the turn does between the answer and Done.
		beforeDone time.Duration
	}{
		{"done at once", 0},
		{"done later", 3 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newBubbleBot(t, nil)
				c := h.bot.Chat()
				a := c.StartActivity(context.Background(), chat.In(alice)).(*activity)
				a.ToolCall("browser_navigate", json.RawMessage(`{"url":"https://example.com/"}`))
				synctest.Wait()
				a.ToolCall("browser_snapshot", nil) // within a second: an edit is scheduled
				synctest.Wait()
				if err := a.Answer(context.Background(), "The page says hello."); err != nil {
					t.Fatal(err)
				}
				time.Sleep(tt.beforeDone)
				a.Done()

				var answerAt time.Time
				edits := 0
				for _, r := range h.fake.Requests() {
					switch {
					case r.Method == "sendMessage" && r.Params["text"] == "The page says hello.":
						answerAt = r.Time
					case r.Method == "editMessageText":
						edits++
						if !answerAt.IsZero() {
							t.Errorf("the progress message was edited %v after the answer was sent", r.Time.Sub(answerAt))
						}
					}
				}
				if answerAt.IsZero() {
					t.Fatalf("no answer sent: %+v", h.fake.Requests())
				}
				if n := len(h.fake.RequestsFor("deleteMessage")); n != 1 {
					t.Errorf("%d deleteMessage requests, want 1", n)
				}
				t.Logf("%d edits of the progress message, all before the answer", edits)
			})
		})
	}
}
