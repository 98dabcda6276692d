package speech

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/speech/speechtest"
)

func TestTranscribe(t *testing.T) {
	fake := speechtest.New(t)
	tr := NewTranscriber(Options{BaseURL: fake.URL, APIKey: "sk-test", Model: "whisper-1"})
	got, err := tr.Transcribe(context.Background(), "voice.ogg", []byte(speechtest.Ogg))
	if err != nil || got != "transcript of voice.ogg" {
		t.Fatalf("Transcribe = %q, %v", got, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Model != "whisper-1" || reqs[0].File != "voice.ogg" || string(reqs[0].Audio) != speechtest.Ogg ||
		reqs[0].Auth != "Bearer sk-test" {
		t.Errorf("requests %+v", reqs)
	}
}

// Whatever the endpoint does wrong is an *Error with a sentence for the
// user, and nothing of the key in it.
func TestTranscribeFailures(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		max    int64
		user   string
		is     error
	}{
		{"server error", 500, `{"error":{"message":"boom"}}`, 0, "refused the voice note (HTTP 500)", nil},
		{"unauthorised", 401, `{"error":{"message":"bad key"}}`, 0, "refused the voice note (HTTP 401)", nil},
		{"garbage", 200, `<html>hello</html>`, 0, "not a transcript", nil},
		{"json without text", 200, `{"foo":1}`, 0, "not a transcript", nil},
		{"silence", 200, `{"text":"  "}`, 0, "could not make out any words", ErrNothingHeard},
		{"too big", 200, `{"text":"x"}`, 10, "too long for me to transcribe", ErrTooBig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := speechtest.New(t)
			fake.Reply(tc.status, tc.body)
			tr := NewTranscriber(Options{BaseURL: fake.URL, APIKey: "sk-secret-key", Model: "whisper-1", MaxBytes: tc.max})
			_, err := tr.Transcribe(context.Background(), "voice.ogg", []byte(speechtest.Ogg))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.UserMessage(), tc.user) {
				t.Fatalf("err = %v, want an *Error saying %q", err, tc.user)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Errorf("the key is in the error: %v", err)
			}
			if tc.max > 0 && len(fake.Requests()) != 0 {
				t.Error("audio over the limit was sent")
			}
		})
	}
}

func TestTranscribeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	tr := NewTranscriber(Options{BaseURL: url + "/v1", Model: "whisper-1"})
	_, err := tr.Transcribe(context.Background(), "voice.ogg", []byte("x"))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.UserMessage(), "unreachable") {
		t.Errorf("err = %v", err)
	}
}

func TestSpeak(t *testing.T) {
	fake := speechtest.New(t)
	sp := NewSpeaker(Options{BaseURL: fake.URL, APIKey: "sk-test", Model: "tts-1", Voice: "nova"})
	audio, err := sp.Speak(context.Background(), "Hello there.")
	if err != nil || string(audio) != speechtest.Ogg {
		t.Fatalf("Speak = %d bytes, %v", len(audio), err)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Input != "Hello there." || reqs[0].Model != "tts-1" || reqs[0].Voice != "nova" || reqs[0].Format != "opus" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestSpeakFailures(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		max    int64
		text   string
		user   string
	}{
		{"server error", 503, `{"error":{"message":"busy"}}`, 0, "hi", "refused the answer (HTTP 503)"},
		{"not opus", 200, `{"ok":true}`, 0, "hi", "not Opus audio"},
		{"mp3 instead", 200, "ID3\x03\x00", 0, "hi", "not Opus audio"},
		{"too much audio", 200, speechtest.Ogg, 8, "hi", "more audio than I can send"},
		{"too long a text", 200, speechtest.Ogg, 0, strings.Repeat("a", MaxInput+1), "too long to read aloud"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := speechtest.New(t)
			fake.Reply(tc.status, tc.body)
			sp := NewSpeaker(Options{BaseURL: fake.URL, Model: "tts-1", MaxBytes: tc.max})
			_, err := sp.Speak(context.Background(), tc.text)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.UserMessage(), tc.user) {
				t.Errorf("err = %v, want an *Error saying %q", err, tc.user)
			}
		})
	}
}

// A request the service failed is sent again whole: the body made once is
// read from its start on the retry.
func TestTranscribeRetrySendsTheWholeAudio(t *testing.T) {
	audio := bytes.Repeat([]byte("OggS voice "), 50_000)
	var mu sync.Mutex
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			t.Errorf("no file: %v", err)
			return
		}
		data, _ := io.ReadAll(f)
		mu.Lock()
		got = append(got, data)
		n := len(got)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"text":"heard"}`)
	}))
	defer srv.Close()
	tr := NewTranscriber(Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "whisper-1"})
	text, err := tr.Transcribe(context.Background(), "voice.ogg", audio)
	if err != nil || text != "heard" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !bytes.Equal(got[0], audio) || !bytes.Equal(got[1], audio) {
		t.Errorf("%d requests; audio whole in each: %v", len(got), len(got) == 2 && bytes.Equal(got[0], audio) && bytes.Equal(got[1], audio))
	}
}
