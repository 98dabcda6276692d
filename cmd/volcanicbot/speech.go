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

// SpeechConfig is speech-to-text for voice notes (stt.*).
type SpeechConfig struct {
	// STTBaseURL, STTAPIKey and STTModel are the transcription endpoint
	// (OpenAI-compatible POST /audio/transcriptions); STTMaxSeconds the
	// longest voice note it is sent.
	STTBaseURL, STTAPIKey, STTModel string
	STTMaxSeconds                   int
}

// Speech settings' defaults.
const (
	defaultSTTModel      = "whisper-1"
	defaultSTTMaxSeconds = int(bot.DefaultMaxVoiceDuration / time.Second)
)

// speech reads the stt.* settings.
func (l *configLoader) speech() SpeechConfig {
	return SpeechConfig{
		STTBaseURL:    l.str("stt.base_url"),
		STTAPIKey:     l.str("stt.api_key"),
		STTModel:      l.str("stt.model"),
		STTMaxSeconds: l.positiveInt("stt.max_seconds", defaultSTTMaxSeconds),
	}
}

// validateSpeech checks STT_BASE_URL.
func (c *Config) validateSpeech() []error {
	if c.Speech.STTBaseURL == "" {
		return nil
	}
	u, err := url.Parse(c.Speech.STTBaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []error{fmt.Errorf("STT_BASE_URL (stt.base_url) must be an http(s) URL, the API's root (got %q)", c.Speech.STTBaseURL)}
	}
	return nil
}

// sttEndpoint is the transcription endpoint the configuration names: its
// own STT_BASE_URL, else the OpenAI endpoint of the model's provider when
// that is OpenAI (a compatible server may not transcribe: it then says so
// to the user). The OpenAI key goes only to the OpenAI endpoint itself:
// another endpoint gets STT_API_KEY or nothing. ok is false when voice
// notes cannot be heard.
func (c *Config) sttEndpoint() (baseURL, key string, ok bool) {
	openaiURL := strings.TrimRight(cmp.Or(c.LLM.OpenAIBaseURL, llm.DefaultOpenAIBaseURL), "/")
	base := strings.TrimRight(c.Speech.STTBaseURL, "/")
	if base == "" {
		if c.modelProvider() != llm.ProviderOpenAI {
			return "", "", false
		}
		base = openaiURL
	}
	key = c.Speech.STTAPIKey
	if key == "" && base == openaiURL {
		key = c.LLM.OpenAIKey
	}
	return base, key, true
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
