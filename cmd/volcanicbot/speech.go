package main

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/speech"
)

// SpeechConfig is speech-to-text for voice notes (stt.*) and
// text-to-speech for voice answers (tts.*).
type SpeechConfig struct {
	// STTBaseURL, STTAPIKey and STTModel are the transcription endpoint
	// (OpenAI-compatible POST /audio/transcriptions); STTMaxSeconds the
	// longest voice note it is sent.
	STTBaseURL, STTAPIKey, STTModel string
	STTMaxSeconds                   int
	// TTSBaseURL, TTSAPIKey, TTSModel and TTSVoice are the speech
	// endpoint (POST /audio/speech); TTSDefault whether a chat that never
	// sent /voice gets voice answers.
	TTSBaseURL, TTSAPIKey, TTSModel, TTSVoice string
	TTSDefault                                bool
}

// Speech settings' defaults.
const (
	defaultSTTModel      = "whisper-1"
	defaultTTSModel      = "tts-1"
	defaultSTTMaxSeconds = int(bot.DefaultMaxVoiceDuration / time.Second)
)

// speech reads the stt.* settings.
func (l *configLoader) speech() SpeechConfig {
	return SpeechConfig{
		STTBaseURL:    l.str("stt.base_url"),
		STTAPIKey:     l.str("stt.api_key"),
		STTModel:      l.str("stt.model"),
		STTMaxSeconds: l.positiveInt("stt.max_seconds", defaultSTTMaxSeconds),
		TTSBaseURL:    l.str("tts.base_url"),
		TTSAPIKey:     l.str("tts.api_key"),
		TTSModel:      l.str("tts.model"),
		TTSVoice:      l.str("tts.voice"),
		TTSDefault:    ptrTrue(l.boolean("tts.default")),
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// validateSpeech checks STT_BASE_URL and TTS_BASE_URL.
func (c *Config) validateSpeech() []error {
	var errs []error
	for _, e := range []struct{ v, key, url string }{
		{"STT_BASE_URL", "stt.base_url", c.Speech.STTBaseURL},
		{"TTS_BASE_URL", "tts.base_url", c.Speech.TTSBaseURL},
	} {
		if e.url == "" {
			continue
		}
		if u, err := url.Parse(e.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s (%s) must be an http(s) URL, the API's root (got %q)", e.v, e.key, e.url))
		}
	}
	return errs
}

// sttEndpoint is the transcription endpoint the configuration names: its
// own STT_BASE_URL, else the OpenAI endpoint of the model's provider when
// that is OpenAI (a compatible server may not transcribe: it then says so
// to the user). The OpenAI key goes only to the OpenAI endpoint itself:
// another endpoint gets STT_API_KEY or nothing. ok is false when voice
// notes cannot be heard.
func (c *Config) sttEndpoint() (baseURL, key string, ok bool) {
	return c.audioEndpoint(c.Speech.STTBaseURL, c.Speech.STTAPIKey)
}

// ttsEndpoint is sttEndpoint for the speech endpoint (TTS_BASE_URL,
// TTS_API_KEY).
func (c *Config) ttsEndpoint() (baseURL, key string, ok bool) {
	return c.audioEndpoint(c.Speech.TTSBaseURL, c.Speech.TTSAPIKey)
}

// audioEndpoint is an audio endpoint named base (its key ownKey), or the
// OpenAI endpoint of the model's provider when that is OpenAI; the OpenAI
// key only for the OpenAI endpoint itself.
func (c *Config) audioEndpoint(base, ownKey string) (baseURL, key string, ok bool) {
	openaiURL := strings.TrimRight(cmp.Or(c.LLM.OpenAIBaseURL, llm.DefaultOpenAIBaseURL), "/")
	base = strings.TrimRight(base, "/")
	if base == "" {
		if c.modelProvider() != llm.ProviderOpenAI {
			return "", "", false
		}
		base = openaiURL
	}
	key = ownKey
	if key == "" && base == openaiURL {
		key = c.LLM.OpenAIKey
	}
	return base, key, true
}

// speaker reads answers aloud (/voice), nil when no speech endpoint is
// configured.
func (c *Config) speaker(m *Main) bot.Speaker {
	base, key, ok := c.ttsEndpoint()
	if !ok {
		return nil
	}
	return speech.NewSpeaker(speech.Options{BaseURL: base, APIKey: key, Model: cmp.Or(c.Speech.TTSModel, defaultTTSModel),
		Voice: c.Speech.TTSVoice, HTTPClient: m.HTTPClient})
}

// voiceOptions are the bot's voice notes of the configuration.
func (c *Config) voiceOptions(m *Main) bot.VoiceOptions {
	o := bot.VoiceOptions{MaxDuration: time.Duration(c.Speech.STTMaxSeconds) * time.Second,
		Model: cmp.Or(c.Speech.STTModel, defaultSTTModel)}
	if base, key, ok := c.sttEndpoint(); ok {
		o.Transcriber = speech.NewTranscriber(speech.Options{BaseURL: base, APIKey: key, Model: o.Model, HTTPClient: m.HTTPClient})
	}
	return o
}

// modelProvider is LLM_PROVIDER, or the provider whose key is set.
func (c *Config) modelProvider() string {
	switch {
	case c.LLM.Provider != "":
		return c.LLM.Provider
	case c.LLM.OpenAIKey != "" || c.LLM.OpenAIBaseURL != "":
		return llm.ProviderOpenAI
	case c.LLM.AnthropicKey != "":
		return llm.ProviderAnthropic
	}
	return ""
}
