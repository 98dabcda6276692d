package speech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3"
)

// MaxInput is the most characters one speech request may read aloud
// (OpenAI's limit): Parts cuts longer texts.
const MaxInput = 4096

// oggMagic starts every Ogg file: an Opus voice note is one.
const oggMagic = "OggS"

// Speaker turns text into an Opus voice note (POST /audio/speech).
type Speaker struct {
	o   Options
	svc openai.AudioSpeechService
}

// NewSpeaker returns a Speaker of o. It does no I/O.
func NewSpeaker(o Options) *Speaker {
	o = o.withDefaults()
	return &Speaker{o: o, svc: openai.NewAudioSpeechService(o.requestOptions()...)}
}

// Speak returns text read aloud as Ogg Opus, which Telegram plays as a
// voice note. text must be at most MaxInput characters (Parts). An
// endpoint that fails, or answers with anything but Ogg audio of at most
// MaxBytes, is an *Error.
func (s *Speaker) Speak(ctx context.Context, text string) ([]byte, error) {
	if n := len([]rune(text)); n > MaxInput {
		return nil, &Error{User: "The answer is too long to read aloud.", Err: fmt.Errorf("%d characters, over %d", n, MaxInput)}
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	res, err := s.svc.New(ctx, openai.AudioSpeechNewParams{
		Input:          text,
		Model:          s.o.Model,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(s.o.Voice)},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatOpus,
	})
	if err != nil {
		return nil, speechFailed(ctx, err)
	}
	defer res.Body.Close()
	audio, err := io.ReadAll(io.LimitReader(res.Body, s.o.MaxBytes+1))
	switch {
	case err != nil:
		return nil, speechFailed(ctx, err)
	case int64(len(audio)) > s.o.MaxBytes:
		return nil, &Error{User: "The text-to-speech service sent more audio than I can send.", Err: ErrTooBig}
	case !bytes.HasPrefix(audio, []byte(oggMagic)):
		return nil, &Error{User: "The text-to-speech service answered with something that is not Opus audio.",
			Err: fmt.Errorf("%s, %d bytes starting %q", res.Header.Get("Content-Type"), len(audio), truncate(string(audio), 40))}
	}
	return audio, nil
}

// speechFailed is the *Error of a speech request that failed with err.
func speechFailed(ctx context.Context, err error) error {
	var apiErr *openai.Error
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{User: "The text-to-speech service took too long to answer.", Err: err}
	case errors.As(err, &apiErr) && apiErr.StatusCode != http.StatusOK:
		return &Error{User: fmt.Sprintf("The text-to-speech service refused the answer (HTTP %d).", apiErr.StatusCode), Err: err}
	}
	return &Error{User: "The text-to-speech service is unreachable.", Err: err}
}
