package bot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/speech"
)

// fakeSpeaker reads text aloud as "OggS<text>", or fails with err.
type fakeSpeaker struct {
	mu   sync.Mutex
	read []string
	err  error
}

func (f *fakeSpeaker) Speak(_ context.Context, text string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read = append(f.read, text)
	if f.err != nil {
		return nil, f.err
	}
	return []byte("OggS" + text), nil
}

// An answer read aloud: its prose only, as voice notes after its text, in
// parts when long; a failure is one line in the chat.
func TestSendVoiceAnswer(t *testing.T) {
	long := strings.Repeat("A sentence to be read aloud. ", 500) // 14,500 characters: three parts, the last cut short
	cases := []struct {
		name   string
		md     string
		err    error
		voices int
		read   string // what the first note reads
		text   string // the one text sent ("" for none)
	}{
		{"prose without code", "Run **this**:\n\n```sh\nmake\n```\n\nSee [the docs](https://x.test).", nil, 1, "Run this:\n\nSee the docs.", ""},
		{"only code", "```\nx := 1\n```", nil, 0, "", ""},
		{"long, in parts", long, nil, 3, "A sentence", ""},
		{"the service fails", "Hello.", &speech.Error{User: "The text-to-speech service is unreachable.", Err: errors.New("dial")}, 0, "",
			"(I could not read this answer aloud: The text-to-speech service is unreachable.)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := &fakeSpeaker{err: tc.err}
			h := newBot(t, func(o *testOptions) { o.Speaker = sp })
			if err := h.bot.Chat().SendVoiceAnswer(context.Background(), chat.In(alice), tc.md); err != nil {
				t.Fatal(err)
			}
			var voices, texts []string
			for _, m := range h.fake.Sent(alice) {
				switch m.Method {
				case "sendVoice":
					voices = append(voices, string(m.File.Data))
				default:
					texts = append(texts, m.Text)
				}
			}
			if len(voices) != tc.voices || tc.voices > 0 && !strings.HasPrefix(voices[0], "OggS"+tc.read) {
				t.Errorf("voice notes %d (%.60q), want %d reading %q", len(voices), voices, tc.voices, tc.read)
			}
			if tc.voices == 3 && !strings.HasSuffix(voices[2], "The rest is in the written answer.") {
				t.Errorf("the last part does not say the rest is written: …%q", voices[2][len(voices[2])-60:])
			}
			if want := []string{tc.text}; tc.text == "" && len(texts) != 0 || tc.text != "" && (len(texts) != 1 || texts[0] != want[0]) {
				t.Errorf("texts %q, want %q", texts, tc.text)
			}
		})
	}
}

func TestVoiceCommand(t *testing.T) {
	cases := []struct {
		name    string
		speaker Speaker
		texts   []string
		calls   []string
		replies []string
	}{
		{"no speech", nil, []string{"/voice on"}, nil, []string{voiceNoTTS}},
		{"on, then asked", &fakeSpeaker{}, []string{"/voice on", "/voice"}, []string{"voice 1001 true"}, []string{voiceOnReply, voiceOnReply}},
		{"off", &fakeSpeaker{}, []string{"/voice OFF"}, []string{"voice 1001 false"}, []string{voiceOffReply2}},
		{"nonsense", &fakeSpeaker{}, []string{"/voice loud"}, nil, []string{voiceUsage}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startBot(t, func(o *testOptions) { o.Speaker = tc.speaker })
			for _, text := range tc.texts {
				h.fake.Message(alice, alice, text)
			}
			if got := h.texts(t, alice, len(tc.replies)); !slices.Equal(got, tc.replies) {
				t.Errorf("replies %q, want %q", got, tc.replies)
			}
			if got := h.sess.Calls(); !slices.Equal(got, tc.calls) {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
		})
	}
}
