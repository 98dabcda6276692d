// Package speechtest is a fake OpenAI-compatible audio API for tests:
// POST /v1/audio/transcriptions answers with a transcript, POST
// /v1/audio/speech with a small Ogg Opus file, and every request is
// recorded.
package speechtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Ogg is what the fake's speech endpoint answers: the start of an Ogg
// Opus file (the "OggS" capture pattern and an OpusHead packet).
const Ogg = "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead\x01\x01\x38\x01\x80\xbb\x00\x00\x00\x00\x00"

// Request is one request the fake received.
type Request struct {
	Path   string
	Auth   string
	Model  string
	File   string // the transcription's file name
	Audio  []byte // the transcription's file
	Input  string // the speech's text
	Voice  string
	Format string // the speech's response_format
}

// Server is the fake. Transcript (when set) answers a transcription of
// audio; else the transcript is "transcript of <file name>". Reply, when
// set, replaces the answer of every request (status and body), to play an
// endpoint that fails or answers garbage.
type Server struct {
	URL        string // the API root: <server>/v1
	Transcript func(audio []byte) string
	mu         sync.Mutex
	reqs       []Request
	reply      *reply
}

type reply struct {
	status int
	body   string
}

// New starts a fake for the test's life.
func New(t testing.TB) *Server {
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// Reply makes every later request answer status with body.
func (s *Server) Reply(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = &reply{status, body}
}

// Requests are the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req := Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	switch r.URL.Path {
	case "/v1/audio/transcriptions":
		if err := r.ParseMultipartForm(64 << 20); err == nil {
			req.Model = r.FormValue("model")
			if f, h, err := r.FormFile("file"); err == nil {
				req.File = h.Filename
				req.Audio, _ = io.ReadAll(f)
				f.Close()
			}
		}
	case "/v1/audio/speech":
		var body struct{ Input, Model, Voice, Response_format string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		req.Input, req.Model, req.Voice, req.Format = body.Input, body.Model, body.Voice, body.Response_format
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	rep, transcript := s.reply, s.Transcript
	s.mu.Unlock()
	switch {
	case rep != nil:
		if strings.HasPrefix(rep.body, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	case req.Path == "/v1/audio/transcriptions":
		text := "transcript of " + req.File
		if transcript != nil {
			text = transcript(req.Audio)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
	case req.Path == "/v1/audio/speech":
		w.Header().Set("Content-Type", "audio/ogg")
		_, _ = io.WriteString(w, Ogg)
	default:
		http.NotFound(w, r)
	}
}
