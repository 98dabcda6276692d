package speech

import (
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// Options configure a Transcriber or a Speaker. The zero value of every
// field but BaseURL and Model has a default.
type Options struct {
	// BaseURL is the API's root, e.g. https://api.openai.com/v1 (the client
	// adds audio/transcriptions or audio/speech).
	BaseURL string
	// APIKey is sent as a bearer token; "" sends none (a local server).
	APIKey string
	// Model is the transcription (whisper-1) or speech (tts-1) model.
	Model string
	// Voice is the speaker's voice (alloy when empty).
	Voice string
	// MaxBytes bounds the audio sent (a transcription) or received (a
	// speech): DefaultMaxBytes when 0.
	MaxBytes int64
	// Timeout bounds one request: DefaultTimeout when 0.
	Timeout time.Duration
	// HTTPClient is the client requests go through (tests); nil: the
	// default.
	HTTPClient *http.Client
}

// Defaults of Options.
const (
	// DefaultMaxBytes is 25 MB: OpenAI's limit for a transcription's file,
	// above Telegram's 20 MB for a bot's download.
	DefaultMaxBytes = 25 << 20
	// DefaultTimeout: a transcription of ten minutes of speech takes about
	// half a minute at OpenAI; a local whisper on a small CPU longer.
	DefaultTimeout = 2 * time.Minute
	// DefaultVoice is the speaker's voice when none is set.
	DefaultVoice = "alloy"
)

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Voice == "" {
		o.Voice = DefaultVoice
	}
	return o
}

// requestOptions are the openai-go options of o: one retry (a voice note
// waits for it), the key only when set.
func (o Options) requestOptions() []option.RequestOption {
	opts := []option.RequestOption{option.WithBaseURL(o.BaseURL), option.WithMaxRetries(1)}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return opts
}
