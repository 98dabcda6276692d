package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// streamedAnswer is an answer as a model writes it: every prefix is a
// step of the stream, some of them with Markdown left open.
var streamedAnswer = []string{
	"Here is **the", " plan**: open the `settings", " page`, click [Save](https://exa", "mple.org) and",
	" wait.\n\n```go\nfunc main() {", "\n\tfmt.Println(\"hi\")\n}\n```\n\nDone ~~or", " not~~.",
}

// newStreamBot is newBubbleBot against a fake with opts.
func newStreamBot(t *testing.T, opts telegramtest.Options, edit func(*testOptions)) *harness {
	t.Helper()
	opts.InProcess = true
	fake := telegramtest.Start(opts)
	t.Cleanup(fake.Close)
	return buildBot(t, fake, func(o *testOptions) {
		o.HTTPClient = fake.Client()
		if edit != nil {
			edit(o)
		}
	})
}

// stream plays streamedAnswer into a, a piece every gap, and returns the
// whole text.
func stream(a session.StreamingActivity, gap time.Duration) string {
	var text string
	for i, p := range streamedAnswer {
		if i > 0 {
			time.Sleep(gap)
		}
		text += p
		a.Stream(text)
	}
	return text
}

// checkUpdates checks that the updates (times in order) are at least
// every apart, and that the first comes no earlier than first after start.
func checkUpdates(t *testing.T, start time.Time, times []time.Time, first, every time.Duration) {
	t.Helper()
	for i, at := range times {
		if i == 0 && at.Sub(start) < first {
			t.Errorf("the first update came %v after the first text, want >= %v", at.Sub(start), first)
		}
		if i > 0 && at.Sub(times[i-1]) < every {
			t.Errorf("update %d came %v after the previous one, want >= %v", i, at.Sub(times[i-1]), every)
		}
	}
}

func streamRequestTimes(f *telegramtest.Fake, chat int64, methods ...string) []time.Time {
	var out []time.Time
	for _, r := range f.Requests() {
		for _, m := range methods {
			if r.Method == m && r.ChatID() == chat {
				out = append(out, r.Time)
			}
		}
	}
	return out
}

// In a group: one message, sent a second after the first text, edited at
// most once a second, valid HTML at every step (the fake refuses broken
// HTML), and the answer's text exactly at the end.
func TestStreamEditsOneMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		c := h.bot.Chat()
		a := c.StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		start := time.Now()
		text := stream(a, time.Second+time.Millisecond) // every step shown
		synctest.Wait()
		if err := a.Answer(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		a.Done()

		sent := h.fake.Sent(group)
		if len(sent) != 1 {
			t.Fatalf("%d messages, want 1: %+v", len(sent), sent)
		}
		want := tgformat.Render(text)[0].HTML
		if sent[0].Text != want || sent[0].ParseMode != "HTML" {
			t.Errorf("final message %q (%s), want %q", sent[0].Text, sent[0].ParseMode, want)
		}
		if sent[0].Edits() < len(streamedAnswer)-1 {
			t.Errorf("%d edits, want one per step", sent[0].Edits())
		}
		for i, v := range sent[0].History {
			if strings.Contains(v, "**") || strings.Contains(v, "`") || strings.Contains(v, "](") || strings.Contains(v, "~~") {
				t.Errorf("version %d shows raw Markdown: %q", i, v)
			}
		}
		checkUpdates(t, start, streamRequestTimes(h.fake, group, "sendMessage", "editMessageText"), c.streamFirst, c.streamEvery)
		if n := h.fake.TooMany(group); n != 0 {
			t.Errorf("%d 429s", n)
		}
	})
}

// In a private chat: drafts while it is written, then the answer as a
// message.
func TestStreamDraftsInAPrivateChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		c := h.bot.Chat()
		a := c.StartActivity(context.Background(), chat.In(alice)).(session.StreamingActivity)
		start := time.Now()
		text := stream(a, 400*time.Millisecond)
		synctest.Wait()
		if err := a.Answer(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		a.Done()

		drafts := h.fake.Drafts(alice)
		if len(drafts) < 2 {
			t.Fatalf("%d drafts, want the stream's", len(drafts))
		}
		var times []time.Time
		for _, d := range drafts {
			if d.DraftID != drafts[0].DraftID || d.ParseMode != "HTML" {
				t.Errorf("draft %+v: another id than %d, or not HTML", d, drafts[0].DraftID)
			}
			times = append(times, d.Time)
		}
		checkUpdates(t, start, times, c.streamFirst, c.streamEvery)
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || sent[0].Text != tgformat.Render(text)[0].HTML || sent[0].Edits() != 0 {
			t.Errorf("messages %+v, want the answer, unedited", sent)
		}
		if n := len(h.fake.RequestsFor("editMessageText")); n != 0 {
			t.Errorf("%d edits", n)
		}
	})
}

// A Bot API without drafts: the first refusal switches to editing a
// message, for this chat and the next ones.
func TestStreamFallsBackWhenDraftsAreRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newStreamBot(t, telegramtest.Options{NoDrafts: true}, nil)
		c := h.bot.Chat()
		a := c.StartActivity(context.Background(), chat.In(alice)).(session.StreamingActivity)
		text := stream(a, 400*time.Millisecond)
		synctest.Wait()
		if err := a.Answer(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		a.Done()
		if n := len(h.fake.RequestsFor("sendMessageDraft")); n != 1 {
			t.Errorf("%d drafts tried, want 1", n)
		}
		sent := h.fake.Sent(alice)
		if len(sent) != 1 || sent[0].Text != tgformat.Render(text)[0].HTML || sent[0].Edits() == 0 {
			t.Errorf("messages %+v, want one streamed message holding the answer", sent)
		}

		b := c.StartActivity(context.Background(), chat.In(bob)).(session.StreamingActivity)
		stream(b, 400*time.Millisecond)
		synctest.Wait()
		b.Done()
		if n := len(h.fake.RequestsFor("sendMessageDraft")); n != 1 {
			t.Errorf("another chat tried drafts again (%d)", n)
		}
	})
}

// An answer done before the first second is sent as it always was: one
// message, no stream.
func TestFastAnswerIsNotStreamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		a.Stream("Hello")
		time.Sleep(500 * time.Millisecond)
		a.Stream("Hello there")
		if err := a.Answer(context.Background(), "Hello there, **world**."); err != nil {
			t.Fatal(err)
		}
		a.Done()
		sent := h.fake.Sent(group)
		if len(sent) != 1 || sent[0].Text != "Hello there, <b>world</b>." || sent[0].Edits() != 0 {
			t.Errorf("messages %+v", sent)
		}
	})
}

// A long answer: the streamed message becomes its first part, the rest
// follow.
func TestStreamedLongAnswerIsSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		var sb strings.Builder
		for i := range 900 {
			fmt.Fprintf(&sb, "word%d ", i)
			if i%50 == 49 {
				a.Stream(sb.String())
				time.Sleep(300 * time.Millisecond)
			}
		}
		text := sb.String()
		if err := a.Answer(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		a.Done()
		want := tgformat.Render(text)
		sent := h.fake.Sent(group)
		if len(want) < 2 || len(sent) != len(want) {
			t.Fatalf("%d messages, want %d", len(sent), len(want))
		}
		for i := range want {
			if sent[i].Text != want[i].HTML {
				t.Errorf("part %d differs", i+1)
			}
		}
		if sent[0].Edits() == 0 {
			t.Error("the first part is not the streamed message")
		}
	})
}

// A long streamed answer cut off after its first part (the shutdown came
// while Telegram held the second back) says so: the next start sends the
// rest only (Chat.SendTextFrom).
func TestStreamedLongAnswerCutOffSaysWhatWentOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		var sb strings.Builder
		for i := range 900 {
			fmt.Fprintf(&sb, "word%d ", i)
			if i == 100 {
				a.Stream(sb.String())
				time.Sleep(2 * time.Second)
			}
		}
		time.Sleep(2 * time.Hour) // the limits below count from the last call
		h.fake.SetLimits(telegramtest.Limits{ChatEvery: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := a.Answer(ctx, sb.String())
		a.Done()
		if chat.SentParts(err) != 1 {
			t.Errorf("cut off after the first part: err %v, SentParts %d", err, chat.SentParts(err))
		}
		// The sender drops the part it held back once its 429 is waited
		// out: nothing of the chat's is left running when the bubble ends.
		time.Sleep(2 * time.Hour)
		synctest.Wait()
	})
}

// A step that calls tools takes its text down; the answer comes after.
func TestStreamTakenDownForTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		a.Stream("Let me look that up")
		time.Sleep(1500 * time.Millisecond)
		if len(h.fake.Sent(group)) != 1 {
			t.Fatal("nothing streamed")
		}
		a.Stream("")
		a.ToolCall("search", nil)
		time.Sleep(2 * time.Second)
		if err := a.Answer(context.Background(), "Found it."); err != nil {
			t.Fatal(err)
		}
		a.Done()
		sent := h.fake.Sent(group)
		if len(sent) != 3 || !sent[0].Deleted || !sent[1].Deleted || sent[2].Text != "Found it." || sent[2].Deleted {
			t.Errorf("messages %+v, want the stream and the progress deleted, then the answer", sent)
		}
	})
}

// /stop mid-stream: the message keeps all that was streamed, in both
// modes (a draft becomes a message).
func TestStoppedStreamKeepsItsText(t *testing.T) {
	for _, chat := range []int64{group, alice} {
		t.Run(fmt.Sprint(chat), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newBubbleBot(t, nil)
				ctx, cancel := context.WithCancel(context.Background())
				a := h.bot.Chat().StartActivity(ctx, inChat(chat)).(session.StreamingActivity)
				a.Stream("The first **three")
				time.Sleep(1500 * time.Millisecond)
				cancel() // /stop
				synctest.Wait()
				a.Stream("The first **three words** and more")
				a.Done()
				sent := h.fake.Sent(chat)
				if len(sent) != 1 || sent[0].Text != "The first <b>three words</b> and more" {
					t.Errorf("messages %+v", sent)
				}
			})
		})
	}
}

// A 429 on a stream's edit holds the chat; the edits queued meanwhile are
// coalesced, the answer arrives, and no second 429 comes.
func TestStreamThrough429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		h.fake.FailNext("editMessageText", http.StatusTooManyRequests, "", 5)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		text := stream(a, 400*time.Millisecond)
		for range 10 { // the stream goes on during the hold
			time.Sleep(400 * time.Millisecond)
			text += " more"
			a.Stream(text)
		}
		if err := a.Answer(context.Background(), text); err != nil {
			t.Fatal(err)
		}
		a.Done()
		sent := h.fake.Sent(group)
		if len(sent) != 1 || sent[0].Text != tgformat.Render(text)[0].HTML {
			t.Fatalf("messages %+v", sent)
		}
		if n := h.fake.TooMany(group); n != 0 {
			t.Errorf("%d 429s for breaking the limits after the first", n)
		}
		st := h.tg.Stats()
		if st.TooMany != 1 || st.Coalesced == 0 {
			t.Errorf("stats %+v, want one 429 and coalesced edits", st)
		}
	})
}

// An answer that comes while its stream's first message still waits (the
// chat is held after a 429) takes that message's place: one message, sent
// once, no edit.
func TestAnswerReplacesAWaitingStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		h.fake.FailNext("sendMessage", http.StatusTooManyRequests, "", 5)
		a := h.bot.Chat().StartActivity(context.Background(), chat.In(group)).(session.StreamingActivity)
		a.Stream("The first words")
		time.Sleep(2 * time.Second) // the first update went out, got the 429: held for 5 s
		a.Stream("The first words and more")
		if err := a.Answer(context.Background(), "The first words and more, done."); err != nil {
			t.Fatal(err)
		}
		a.Done()
		sent := h.fake.Sent(group)
		if len(sent) != 1 || sent[0].Text != "The first words and more, done." || sent[0].Edits() != 0 {
			t.Errorf("messages %+v, want the answer once", sent)
		}
		if n := len(h.fake.RequestsFor("sendMessage")); n != 2 { // the 429, then the answer
			t.Errorf("%d sendMessage calls, want 2", n)
		}
	})
}
