package bot

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/speech"
)

// fakeTranscriber hears what its answer says, or fails with err.
type fakeTranscriber struct {
	mu     sync.Mutex
	answer string
	err    error
	heard  []string // name: bytes
}

func (f *fakeTranscriber) Transcribe(_ context.Context, name string, data []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heard = append(f.heard, name+": "+string(data))
	return f.answer, f.err
}

func (f *fakeTranscriber) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.heard...)
}

// A voice note, an audio file and a round video are transcribed; the
// chat sees what was understood, and the session gets the transcript (and
// the caption after it) with the file.
func TestVoiceNotesAreTranscribed(t *testing.T) {
	long := strings.Repeat("many words ", 40)
	tags := regexp.MustCompile(`<[^>]+>`)
	cases := []struct {
		name    string
		send    func(h *harness) int
		heard   string
		answer  string
		shown   string
		deliver string
	}{
		{"voice note", func(h *harness) int { return h.fake.Voice(alice, alice, []byte("OggS-1"), 3, 0, "") },
			"voice-%d.ogg: OggS-1", "buy milk", "🎤 buy milk",
			`deliver 1001 (voice note, transcribed) buy milk +file "voice-%d.ogg" audio/ogg 6`},
		{"with a caption", func(h *harness) int { return h.fake.Voice(alice, alice, []byte("OggS-2"), 3, 0, "urgent") },
			"voice-%d.ogg: OggS-2", "buy milk", "🎤 buy milk",
			`deliver 1001 (voice note, transcribed) buy milk` + "\n\nurgent" + ` +file "voice-%d.ogg" audio/ogg 6`},
		{"audio file", func(h *harness) int { return h.fake.Audio(alice, alice, "talk.mp3", []byte("ID3"), 60, "") },
			"talk.mp3: ID3", "a talk", "🎤 a talk", `deliver 1001 (voice note, transcribed) a talk +file "talk.mp3" audio/mpeg 3`},
		{"round video", func(h *harness) int { return h.fake.VideoNote(alice, alice, []byte("mp4"), 5) },
			"video-note-%d.mp4: mp4", "hi there", "🎤 hi there",
			`deliver 1001 (voice note, transcribed) hi there +file "video-note-%d.mp4" video/mp4 3`},
		{"long transcript folded", func(h *harness) int { return h.fake.Voice(alice, alice, []byte("OggS"), 120, 0, "") },
			"voice-%d.ogg: OggS", long, "🎤 " + strings.TrimSpace(long), `deliver 1001 (voice note, transcribed) ` + long + ` +file "voice-%d.ogg" audio/ogg 4`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &fakeTranscriber{answer: tc.answer}
				h := startBubbleBot(t, func(o *testOptions) { o.Voice.Transcriber = tr })
				id := tc.send(h)
				synctest.Wait()
				if got := tr.calls(); len(got) != 1 || got[0] != sprintfID(tc.heard, id) {
					t.Errorf("heard %q, want %q", got, sprintfID(tc.heard, id))
				}
				sent := h.fake.Sent(alice)
				if len(sent) != 1 || strings.TrimSpace(tags.ReplaceAllString(sent[0].Text, "")) != tc.shown || sent[0].ParseMode != "HTML" {
					t.Fatalf("the chat was shown %+v, want %q", sent, tc.shown)
				}
				if folded := strings.Contains(sent[0].Text, "<blockquote expandable>"); folded != (len(tc.answer) >= transcriptFolded) {
					t.Errorf("folded %v: %s", folded, sent[0].Text)
				}
				if calls := h.sess.Calls(); len(calls) != 1 || calls[0] != sprintfID(tc.deliver, id) {
					t.Errorf("the session got %q, want %q", calls, sprintfID(tc.deliver, id))
				}
			})
		})
	}
}

// Voice notes the bot cannot hear get a clear reply, and nothing reaches
// the session.
func TestVoiceNotesNotHeard(t *testing.T) {
	cases := []struct {
		name  string
		tr    Transcriber
		send  func(h *harness)
		reply string
	}{
		{"no speech-to-text", nil, func(h *harness) { h.fake.Voice(alice, alice, []byte("OggS"), 3, 0, "") }, voiceOffReply},
		{"too long", &fakeTranscriber{answer: "x"}, func(h *harness) { h.fake.Voice(alice, alice, []byte("OggS"), 11*60, 0, "") },
			"That voice note is 11 minutes long; I transcribe up to 10 minutes. Please try again, or write your message."},
		{"too big to download", &fakeTranscriber{answer: "x"}, func(h *harness) { h.fake.Voice(alice, alice, []byte("OggS"), 60, 30<<20, "") },
			tooBigReply},
		{"endpoint down", &fakeTranscriber{err: &speech.Error{User: "The speech-to-text service is unreachable.", Err: errors.New("dial tcp: refused")}},
			func(h *harness) { h.fake.Voice(alice, alice, []byte("OggS"), 3, 0, "") },
			"The speech-to-text service is unreachable. Please try again, or write your message."},
		{"a failure without words for the user", &fakeTranscriber{err: errors.New("boom")},
			func(h *harness) { h.fake.Voice(alice, alice, []byte("OggS"), 3, 0, "") }, voiceFailedReply + voiceRetry},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startBubbleBot(t, func(o *testOptions) { o.Voice.Transcriber = tc.tr })
				tc.send(h)
				synctest.Wait()
				if got := h.fake.Texts(alice); len(got) != 1 || got[0] != tc.reply {
					t.Errorf("replies %q, want %q", got, tc.reply)
				}
				if calls := h.sess.Calls(); len(calls) != 0 {
					t.Errorf("the session got %q", calls)
				}
			})
		})
	}
}

// In a group a voice note is for the bot only when it replies to the bot.
func TestVoiceNoteInAGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &fakeTranscriber{answer: "hello"}
		h := startBubbleBot(t, func(o *testOptions) { o.Voice.Transcriber = tr })
		h.fake.Voice(group, alice, []byte("OggS"), 3, 0, "")
		synctest.Wait()
		if len(tr.calls()) != 0 || len(h.fake.Sent(group)) != 0 {
			t.Errorf("a voice note not for the bot was heard: %q", tr.calls())
		}
		m := h.fake.NewMessage(group, alice, "")
		m.Voice = &models.Voice{FileID: "none", Duration: 3}
		m.ReplyToMessage = &models.Message{ID: 1, From: &models.User{ID: h.fake.Me().ID, IsBot: true}, Chat: m.Chat}
		h.fake.Send(updateOf(m))
		synctest.Wait()
		if got := h.fake.Texts(group); len(got) != 1 || got[0] != fileReply {
			t.Errorf("a voice note replying to the bot: %q (its file does not exist)", got)
		}
	})
}

func sprintfID(s string, id int) string {
	if !strings.Contains(s, "%d") {
		return s
	}
	return strings.ReplaceAll(s, "%d", strconv.Itoa(id))
}
