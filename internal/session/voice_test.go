package session

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// A chat that asked for voice answers gets each answer read aloud after
// its text, also after /new and a restart; the others do not; the default
// is TTS_DEFAULT's.
func TestVoiceAnswers(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, echoText, envOptions{dataDir: dir, voice: true})
	if on, err := e.manager.Voice(chat.In(1)); err != nil || on {
		t.Fatalf("Voice before /voice = %v, %v", on, err)
	}
	if err := e.manager.SetVoice(chat.In(1), true); err != nil {
		t.Fatal(err)
	}
	e.deliver(chat.In(1), "hi")
	e.deliver(chat.In(2), "hi")
	e.deliver(chat.In(2), "ho") // after the first answer and any voice of it
	if got := e.chat.waitTexts(t, chat.In(1), 2); !slices.Equal(got, []string{"re: hi", "🔊 re: hi"}) {
		t.Errorf("chat 1 got %q", got)
	}
	if got := e.chat.waitTexts(t, chat.In(2), 2); !slices.Equal(got, []string{"re: hi", "re: ho"}) {
		t.Errorf("chat 2 got %q", got)
	}
	if err := e.manager.Reset(context.Background(), chat.In(1)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(e.manager.voicePath(chat.In(1))); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("voice.json after /new: %v, %v", fi, err)
	}
	e.close()

	e = newEnv(t, echoText, envOptions{dataDir: dir, voice: true, voiceDefault: true})
	e.deliver(chat.In(1), "again")
	if got := e.chat.waitTexts(t, chat.In(1), 2); !slices.Equal(got, []string{"re: again", "🔊 re: again"}) {
		t.Errorf("after a restart chat 1 got %q", got)
	}
	if err := e.manager.SetVoice(chat.In(3), false); err != nil {
		t.Fatal(err)
	}
	e.deliver(chat.In(4), "x")
	e.deliver(chat.In(3), "y")
	e.deliver(chat.In(3), "z")
	if got := e.chat.waitTexts(t, chat.In(3), 2); !slices.Equal(got, []string{"re: y", "re: z"}) {
		t.Errorf("chat 3 (off) got %q", got)
	}
	if got := e.chat.waitTexts(t, chat.In(4), 2); !slices.Equal(got, []string{"re: x", "🔊 re: x"}) {
		t.Errorf("chat 4 (the default, on) got %q", got)
	}
}
