package speech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Transcriber turns audio into text (POST /audio/transcriptions).
type Transcriber struct {
	o   Options
	svc openai.AudioTranscriptionService
}

// NewTranscriber returns a Transcriber of o. It does no I/O.
func NewTranscriber(o Options) *Transcriber {
	o = o.withDefaults()
	return &Transcriber{o: o, svc: openai.NewAudioTranscriptionService(o.requestOptions()...)}
}

// Transcribe returns what is said in audio, a file named name (its
// extension tells the endpoint the format: voice.ogg, note.mp3). Audio
// over MaxBytes is refused before anything is sent (ErrTooBig); an
// endpoint that fails, is unreachable or answers something else than a
// transcript, and a transcript with no words (ErrNothingHeard), are
// *Error.
//
// The request's body is made once, at its exact size, and sent again as
// it is on a retry: the SDK's own form would hold the audio in a buffer
// grown by doubling, and a 19 MB voice note took the bot's peak memory up
// by 100 MiB. It is given as bytes, so that the SDK gives each try a
// reader of its own (a *bytes.Reader it rewinds, while the HTTP transport
// of the failed try may still hold it: a retry went out empty).
func (t *Transcriber) Transcribe(ctx context.Context, name string, audio []byte) (string, error) {
	if int64(len(audio)) > t.o.MaxBytes {
		return "", &Error{User: fmt.Sprintf("The voice note is too long for me to transcribe (over %d MB).", t.o.MaxBytes>>20), Err: ErrTooBig}
	}
	body, form, err := transcriptionForm(name, audio, t.o.Model)
	if err != nil {
		return "", &Error{User: "I could not read the voice note.", Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, t.o.Timeout)
	defer cancel()
	res, err := t.svc.New(ctx, openai.AudioTranscriptionNewParams{
		File:  openai.File(bytes.NewReader(nil), name, contentType(name)),
		Model: t.o.Model,
	}, option.WithRequestBody(form, body)) // a []byte: every try reads it afresh
	if err != nil {
		return "", transcriptionFailed(ctx, err)
	}
	if !res.JSON.Text.Valid() {
		return "", &Error{User: "The speech-to-text service answered with something that is not a transcript.",
			Err: errors.New("no text in the response: " + truncate(res.RawJSON(), 200))}
	}
	text := strings.TrimSpace(res.Text)
	if text == "" {
		return "", &Error{User: "I could not make out any words in the voice note.", Err: ErrNothingHeard}
	}
	return text, nil
}

// transcriptionForm is the multipart form of a transcription request
// (file and model, as the SDK's form has them) and its content type, in
// one buffer of its final size.
func transcriptionForm(name string, audio []byte, model string) ([]byte, string, error) {
	var b bytes.Buffer
	b.Grow(len(audio) + 1024)
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": name}))
	h.Set("Content-Type", contentType(name))
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(audio); err != nil {
		return nil, "", err
	}
	if err := w.WriteField("model", model); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// transcriptionFailed is the *Error of a request that failed with err.
func transcriptionFailed(ctx context.Context, err error) error {
	var apiErr *openai.Error
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{User: "The speech-to-text service took too long to answer.", Err: err}
	case errors.As(err, &apiErr):
		return &Error{User: fmt.Sprintf("The speech-to-text service refused the voice note (HTTP %d).", apiErr.StatusCode), Err: err}
	}
	return &Error{User: "The speech-to-text service is unreachable or answered with something that is not a transcript.", Err: err}
}

// contentType is the audio type of a file named name.
func contentType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".ogg", ".oga", ".opus":
		return "audio/ogg"
	case ".mp3":
		return "audio/mpeg"
	case ".m4a":
		return "audio/mp4"
	case ".wav":
		return "audio/wav"
	case ".webm":
		return "audio/webm"
	}
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
