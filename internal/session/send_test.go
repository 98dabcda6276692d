package session

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// sendEnv is a session whose send tool is called directly, and a folder
// outside its workspace holding a secret.
func sendEnv(t *testing.T) (e *env, s *session, ws, secret string) {
	t.Helper()
	e = newEnv(t, echoText, envOptions{})
	s, err := e.manager.get(chat.In(70))
	if err != nil {
		t.Fatal(err)
	}
	ws = e.manager.Workspace(chat.In(70))
	for _, dir := range []string{ws, e.manager.Private(chat.In(70))} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secret = filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(secret, []byte("root:SECRET-OUTSIDE"), 0o600); err != nil {
		t.Fatal(err)
	}
	return e, s, ws, secret
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// What send refuses, and what it sends. A symlink is refused at any
// component, even one that stays inside the workspace; so is a file with
// another name (a hardlink: to the transcript, or to a file outside).
func TestSendRefusals(t *testing.T) {
	e, s, ws, secret := sendEnv(t)
	write(t, filepath.Join(ws, "ok.txt"), "fine")
	write(t, filepath.Join(ws, "deep", "er", "ok.txt"), "deeper")
	transcript := filepath.Join(e.manager.Private(chat.In(70)), transcriptName)
	write(t, transcript, `{"role":"user"}`)
	write(t, filepath.Join(ws, "empty.txt"), "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Link(transcript, filepath.Join(ws, "transcript-copy.jsonl")))
	must(os.Link(secret, filepath.Join(ws, "passwd")))
	must(os.Symlink("ok.txt", filepath.Join(ws, "inside-link.txt")))
	must(os.Symlink("deep", filepath.Join(ws, "deep-link")))
	must(os.Symlink(filepath.Dir(secret), filepath.Join(ws, "outside")))
	must(syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o600))
	big, err := os.Create(filepath.Join(ws, "big.bin"))
	must(err)
	must(big.Truncate(MaxSendBytes + 1))
	big.Close()

	tests := []struct {
		path, wantErr, wantSent string
	}{
		{path: "ok.txt", wantSent: "fine"},
		{path: "./deep/er/../er/ok.txt", wantSent: "deeper"},
		{path: "", wantErr: "path is required"},
		{path: "/etc/passwd", wantErr: "is absolute"},
		{path: "../outside.txt", wantErr: "leaves the workspace"},
		{path: "missing.txt", wantErr: "no file at"},
		// Where versions before kept it: the private state is not there.
		{path: ".volcanic/transcript.jsonl", wantErr: "no file at"},
		{path: "../../private/70/transcript.jsonl", wantErr: "leaves the workspace"},
		{path: "transcript-copy.jsonl", wantErr: "has other names"},
		{path: "passwd", wantErr: "has other names"},
		{path: "inside-link.txt", wantErr: "symlink"},
		{path: "deep-link/er/ok.txt", wantErr: "symlink"},
		{path: "outside/passwd", wantErr: "symlink"},
		{path: "pipe", wantErr: "not a regular file"},
		{path: "deep", wantErr: "not a regular file"},
		{path: "empty.txt", wantErr: "is empty"},
		{path: "big.bin", wantErr: "at most 50 MB"},
		{path: "ok.txt/x", wantErr: "no file at"},
	}
	for _, open := range senders(e, s) {
		for _, tt := range tests {
			t.Run(open.name+"/"+tt.path, func(t *testing.T) {
				done := make(chan struct{})
				var sent []string
				var err error
				go func() {
					defer close(done)
					sent, err = open.send(tt.path)
				}()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					unblockFIFO(ws)
					<-done
					t.Fatalf("send %q hung", tt.path)
				}
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
					}
					if len(sent) != 0 {
						t.Errorf("sent %q", sent)
					}
					return
				}
				if err != nil || len(sent) != 1 || sent[0] != tt.wantSent {
					t.Errorf("sent %q, err %v; want %q", sent, err, tt.wantSent)
				}
			})
		}
	}
}

// sender sends a workspace file and returns what reached the chat.
type sender struct {
	name string
	send func(rel string) (sent []string, err error)
}

// senders are the send tool as it runs (openat2 on Linux), and the same
// checks over the walk that stands in where openat2 is missing.
func senders(e *env, s *session) []sender {
	return []sender{
		{"tool", func(rel string) ([]string, error) {
			before := len(e.chat.Contents(s.id))
			_, err := s.sendFile(context.Background(), sendArgs{Path: rel, Caption: "c"})
			return e.chat.Contents(s.id)[before:], err
		}},
		{"walk", func(rel string) ([]string, error) {
			f, size, err := openSendFileWith(openWalk, s.workspace, rel)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			b, err := io.ReadAll(io.NewSectionReader(f, 0, size))
			return []string{string(b)}, err
		}},
	}
}

// unblockFIFO opens the FIFO named pipe in ws for writing, so that a
// reader blocked on it (a send before the fix) returns.
func unblockFIFO(ws string) {
	for _, name := range []string{"pipe", "race.txt"} {
		if f, err := os.OpenFile(filepath.Join(ws, name), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
}
