package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/speech/speechtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// A voice note reaches the model as its transcript, through the real
// binary's configuration (STT_BASE_URL, STT_API_KEY, STT_MODEL): the chat
// is shown what was understood, the file is in the workspace, and the
// endpoint got the note with its own key, never the model's.
func TestE2EVoiceNoteReachesTheModel(t *testing.T) {
	stt := speechtest.New(t)
	stt.Transcript = func([]byte) string { return "what is the capital of Peru" }
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("Lima.")
	}, daemonOptions{extra: []string{"STT_BASE_URL=" + stt.URL, "STT_API_KEY=stt-key-123", "STT_MODEL=whisper-large-v3"}})
	d.tg.Voice(alice, alice, []byte(speechtest.Ogg), 4, 0, "")
	d.waitText(alice, "Lima.")
	if got := d.tg.Texts(alice); len(got) < 2 || !strings.Contains(got[0], "🎤 what is the capital of Peru") {
		t.Errorf("the chat was not shown the transcript first: %q", got)
	}
	body := string(d.model.Requests()[0].Body)
	if !strings.Contains(body, "(voice note, transcribed) what is the capital of Peru") || !strings.Contains(body, "uploads/voice-") {
		t.Errorf("the model's request lacks the transcript or the file:\n%.2000s", body)
	}
	reqs := stt.Requests()
	if len(reqs) != 1 || reqs[0].Auth != "Bearer stt-key-123" || reqs[0].Model != "whisper-large-v3" || string(reqs[0].Audio) != speechtest.Ogg {
		t.Errorf("the transcription requests: %+v", reqs)
	}
	d.tg.Message(alice, alice, "/usage")
	d.waitText(alice, "voice notes transcribed: 4 s")
	saved, _ := filepath.Glob(filepath.Join(d.dataDir, "chats", fmt.Sprint(alice), "uploads", "voice-*.ogg"))
	if len(saved) != 1 {
		t.Errorf("saved voice notes: %v", saved)
	}
}

// Where the transcription endpoint is, and which key it gets: the OpenAI
// key goes to the OpenAI endpoint only.
func TestSTTEndpoint(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		base, key string
		ok        bool
	}{
		{"openai by default", Config{LLM: LLMConfig{Provider: "openai", OpenAIKey: "sk-o"}}, "https://api.openai.com/v1", "sk-o", true},
		{"the model's compatible endpoint", Config{LLM: LLMConfig{OpenAIKey: "sk-o", OpenAIBaseURL: "http://vllm:8000/v1/"}}, "http://vllm:8000/v1", "sk-o", true},
		{"anthropic: none", Config{LLM: LLMConfig{Provider: "anthropic", AnthropicKey: "a"}}, "", "", false},
		{"anthropic with STT_BASE_URL", Config{LLM: LLMConfig{Provider: "anthropic"}, Speech: SpeechConfig{STTBaseURL: "https://api.groq.com/openai/v1", STTAPIKey: "gsk"}},
			"https://api.groq.com/openai/v1", "gsk", true},
		{"another endpoint never gets the OpenAI key", Config{LLM: LLMConfig{Provider: "openai", OpenAIKey: "sk-o"}, Speech: SpeechConfig{STTBaseURL: "http://whisper:9000/v1"}},
			"http://whisper:9000/v1", "", true},
		{"the same endpoint named again gets it", Config{LLM: LLMConfig{Provider: "openai", OpenAIKey: "sk-o"}, Speech: SpeechConfig{STTBaseURL: "https://api.openai.com/v1/"}},
			"https://api.openai.com/v1", "sk-o", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, key, ok := tc.cfg.sttEndpoint()
			if base != tc.base || key != tc.key || ok != tc.ok {
				t.Errorf("sttEndpoint = %q, %q, %v; want %q, %q, %v", base, key, ok, tc.base, tc.key, tc.ok)
			}
		})
	}
}

// The STT_* variables are read, and a bad endpoint is refused at start.
func TestLoadSpeechConfig(t *testing.T) {
	c := loadOK(t, testEnv{"HOME": "/h", "STT_BASE_URL": "https://api.groq.com/openai/v1", "STT_API_KEY": "gsk",
		"STT_MODEL": "whisper-large-v3", "STT_MAX_SECONDS": "120"})
	want := SpeechConfig{STTBaseURL: "https://api.groq.com/openai/v1", STTAPIKey: "gsk", STTModel: "whisper-large-v3", STTMaxSeconds: 120}
	if c.Speech != want {
		t.Errorf("Speech = %+v, want %+v", c.Speech, want)
	}
	c.Speech.STTBaseURL = "ftp://whisper"
	if err := c.Validate(false); err == nil || !strings.Contains(err.Error(), "STT_BASE_URL (stt.base_url) must be an http(s) URL") {
		t.Errorf("Validate: %v", err)
	}
	c.Speech.STTBaseURL, c.Speech.TTSBaseURL = "", "localhost:8000"
	if err := c.Validate(false); err == nil || !strings.Contains(err.Error(), "TTS_BASE_URL (tts.base_url) must be an http(s) URL") {
		t.Errorf("Validate: %v", err)
	}
	loadErr(t, testEnv{"HOME": "/h", "STT_MAX_SECONDS": "-3"}, nil, "STT_MAX_SECONDS")
	loadErr(t, testEnv{"HOME": "/h", "TTS_DEFAULT": "loud"}, nil, "TTS_DEFAULT: must be true or false")
	if c := loadOK(t, testEnv{"HOME": "/h", "TTS_DEFAULT": "true", "TTS_VOICE": "nova"}); !c.Speech.TTSDefault || c.Speech.TTSVoice != "nova" {
		t.Errorf("TTS_DEFAULT, TTS_VOICE: %+v", c.Speech)
	}
}

// /voice on makes the real binary read each answer aloud through
// TTS_BASE_URL after its text: a sendVoice with the endpoint's Opus, its
// prose only; /voice off stops it; the choice survives a restart.
func TestE2EVoiceAnswers(t *testing.T) {
	tts := speechtest.New(t)
	dataDir := t.TempDir()
	tg := newTelegram(t)
	reply := func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("Lima is the capital.\n\n```\ncurl https://x.test\n```")
	}
	o := daemonOptions{dataDir: dataDir, tg: tg, extra: []string{"TTS_BASE_URL=" + tts.URL, "TTS_API_KEY=tts-key", "TTS_VOICE=nova"}}
	d := startDaemon(t, reply, o)
	d.tg.Message(alice, alice, "/voice on")
	d.waitText(alice, "Voice answers are on")
	d.tg.Message(alice, alice, "capital of Peru?")
	if err := d.tg.WaitUntil(func() bool { return len(voices(d.tg.Sent(alice))) == 1 }, 20*time.Second); err != nil {
		t.Fatalf("no voice note: %q", d.tg.Texts(alice))
	}
	if v := voices(d.tg.Sent(alice)); string(v[0]) != speechtest.Ogg {
		t.Errorf("the voice note holds %q", v[0])
	}
	reqs := tts.Requests()
	if len(reqs) != 1 || reqs[0].Input != "Lima is the capital." || reqs[0].Voice != "nova" || reqs[0].Format != "opus" || reqs[0].Auth != "Bearer tts-key" {
		t.Errorf("speech requests %+v", reqs)
	}
	d.stop()

	d = startDaemon(t, reply, o)
	d.tg.Message(alice, alice, "/voice")
	d.waitText(alice, "Voice answers are on")
	d.tg.Message(alice, alice, "/voice off")
	d.waitText(alice, "Voice answers are off")
	d.tg.Message(alice, alice, "again?")
	d.tg.Message(alice, alice, "/usage") // after the answer, and any voice of it
	d.waitText(alice, "Model usage of this chat")
	if n := len(voices(d.tg.Sent(alice))); n != 1 {
		t.Errorf("%d voice notes after /voice off, want the one from before", n)
	}
}

// voices are the data of the voice notes among msgs.
func voices(msgs []telegramtest.Message) [][]byte {
	var out [][]byte
	for _, m := range msgs {
		if m.Method == "sendVoice" && m.File != nil {
			out = append(out, m.File.Data)
		}
	}
	return out
}
