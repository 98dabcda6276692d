package telegram

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// localClient is a client of fake, a local Bot API server whose --dir is
// dir as the bot sees it ("" for none), taking files up to max bytes.
func localClient(t *testing.T, fake *telegramtest.Fake, dir string, max int64, log io.Writer) *Client {
	t.Helper()
	c, err := New(Options{
		Token: fake.Token(), APIURL: fake.URL(), LocalFilesDir: dir, MaxLocalFile: max,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep:  func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// writeFile writes data at path, making its folders.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file a local Bot API server names by its absolute path is read from
// its folder as the bot sees it, confined to the bot's own folder there:
// a symlink out of it, a "..", another bot's folder, a missing file or a
// folder is ErrLocalFile and nothing is read; a file over the limit is
// ErrTooBig (with the limit), by the size getFile gives or the disk's. No
// error and no log line holds the token.
func TestFetchLocalFile(t *testing.T) {
	const secret = "the secret of another folder"
	cases := []struct {
		name string
		// path is the file getFile names, relative to the server's
		// --dir, where "TOKEN" stands for the bot's token.
		path    string
		size    int64 // what getFile says (0: the file's size)
		want    error // nil: the file's content is read
		wantMsg string
	}{
		{"a file in the bot's folder", "TOKEN/documents/file_1.txt", 0, nil, ""},
		{"a symlink out of the folder", "TOKEN/documents/link.txt", 0, ErrLocalFile, "escapes"},
		{"a symlink to another bot's folder", "TOKEN/documents/other.txt", 0, ErrLocalFile, "escapes"},
		{"a dot-dot path", "TOKEN/documents/../../secret.txt", 0, ErrLocalFile, `".."`},
		{"another bot's folder", "987654321:AAOtherBotsToken/documents/file_1.txt", 0, ErrLocalFile, "not in this bot's folder"},
		{"a missing file", "TOKEN/documents/file_9.txt", 0, ErrLocalFile, "no such file"},
		{"a folder", "TOKEN/documents", 0, ErrLocalFile, "not a regular file"},
		{"the bot's folder itself", "TOKEN", 0, ErrLocalFile, "folder itself"},
		{"over the limit by getFile's size", "TOKEN/documents/file_1.txt", 5 << 20, ErrTooBig, "file over 1 MB"},
		{"over the limit by the disk's size", "TOKEN/documents/big.bin", 10, ErrTooBig, "file over 1 MB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := telegramtest.New(t)
			dir := t.TempDir()
			token := fake.Token()
			content := []byte("hello from the local server\n")
			writeFile(t, filepath.Join(dir, token, "documents", "file_1.txt"), content)
			writeFile(t, filepath.Join(dir, token, "documents", "big.bin"), make([]byte, 2<<20))
			writeFile(t, filepath.Join(dir, "secret.txt"), []byte(secret))
			writeFile(t, filepath.Join(dir, "987654321:AAOtherBotsToken", "documents", "file_1.txt"), []byte(secret))
			if err := os.Symlink("../../secret.txt", filepath.Join(dir, token, "documents", "link.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../../987654321:AAOtherBotsToken/documents/file_1.txt", filepath.Join(dir, token, "documents", "other.txt")); err != nil {
				t.Fatal(err)
			}
			var log testkit.SyncBuffer
			c := localClient(t, fake, dir, 1<<20, &log)
			path := "/var/lib/telegram-bot-api/" + strings.ReplaceAll(tc.path, "TOKEN", token)
			fake.DocumentAt(alice, alice, "f.txt", "text/plain", path, tc.size, "")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			f, err := c.Fetch(ctx, alice, "file-1", 0)
			var got []byte
			if err == nil {
				var r io.ReadCloser
				if r, err = f.Open(); err == nil {
					got, err = io.ReadAll(r)
					r.Close()
				}
			}
			switch {
			case tc.want == nil && (err != nil || !bytes.Equal(got, content)):
				t.Fatalf("read %q, %v; want %q", got, err, content)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err = %v; want %v", err, tc.want)
			case tc.want != nil && !strings.Contains(err.Error(), tc.wantMsg):
				t.Errorf("err = %q; want it to say %q", err, tc.wantMsg)
			case tc.want != nil && (len(got) > 0 || f.Data != nil):
				t.Errorf("read %q despite %v", got, err)
			}
			if err != nil {
				t.Logf("err: %v", err)
			}
			if bytes.Contains(got, []byte(secret)) {
				t.Errorf("read another folder's file: %q", got)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error holds the token: %q", err)
			}
			if strings.Contains(log.String(), token) || strings.Contains(log.String(), strings.SplitN(token, ":", 2)[1]) {
				t.Errorf("the log holds the token:\n%s", log.String())
			}
			if n := len(fake.RequestsFor("file")); n != 0 {
				t.Errorf("%d downloads from the file endpoint; want none", n)
			}
		})
	}
}

// Without the local server's folder, an answer with a path on its disk
// is ErrLocalPath (which says how to set it up), and nothing is read; a
// Bot API that serves its files (a relative path) is downloaded as ever,
// within 20 MB whatever the local limit.
func TestFetchLocalPathWithoutFolder(t *testing.T) {
	fake := telegramtest.New(t)
	var log testkit.SyncBuffer
	c := localClient(t, fake, "", 0, &log)
	fake.DocumentAt(alice, alice, "f.txt", "text/plain", "/var/lib/telegram-bot-api/"+fake.Token()+"/documents/file_1.txt", 10, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Fetch(ctx, alice, "file-1", 0); !errors.Is(err, ErrLocalPath) || !strings.Contains(err.Error(), "TELEGRAM_LOCAL_FILES_DIR") {
		t.Fatalf("err = %v; want ErrLocalPath naming TELEGRAM_LOCAL_FILES_DIR", err)
	}
	if c.MaxFile() != MaxDownload || c.Local() {
		t.Errorf("MaxFile = %d, Local = %v; want %d, false", c.MaxFile(), c.Local(), MaxDownload)
	}

	served := localClient(t, fake, t.TempDir(), 0, &log)
	fake.Document(alice, alice, "a.txt", "text/plain", []byte("over HTTP"), 0, "")
	f, err := served.Fetch(ctx, alice, "file-2", 0)
	if err != nil || string(f.Data) != "over HTTP" {
		t.Fatalf("Fetch = %q, %v; want the download", f.Data, err)
	}
	if served.MaxFile() != MaxLocalFile {
		t.Errorf("MaxFile = %d; want %d", served.MaxFile(), int64(MaxLocalFile))
	}
	fake.Document(alice, alice, "big.pdf", "application/pdf", []byte("x"), 30<<20, "")
	var tooBig *TooBigError
	if _, err := served.Fetch(ctx, alice, "file-3", 0); !errors.As(err, &tooBig) || tooBig.Limit != MaxDownload {
		t.Errorf("a 30 MB download: %v; want a TooBigError of 20 MB", err)
	}
}

// The fake as a local server (ServeLocal) writes what users send to its
// folder; Download reads it into memory up to the limit it is given (a
// voice note for speech-to-text), and a File opened after the file
// changed size is refused.
func TestDownloadLocalFile(t *testing.T) {
	fake := telegramtest.New(t)
	dir := t.TempDir()
	fake.ServeLocal(dir)
	var log testkit.SyncBuffer
	c := localClient(t, fake, dir, 0, &log)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fake.Voice(alice, alice, []byte("OggS voice"), 3, 0, "")
	data, err := c.Download(ctx, alice, "file-1", 25<<20)
	if err != nil || string(data) != "OggS voice" {
		t.Fatalf("Download = %q, %v", data, err)
	}
	fake.DocumentStream(alice, alice, "talk.mp3", "audio/mpeg", 30<<20, 30<<20, "")
	var tooBig *TooBigError
	if data, err := c.Download(ctx, alice, "file-2", 25<<20); !errors.As(err, &tooBig) || tooBig.Limit != 25<<20 || data != nil {
		t.Fatalf("a 30 MB voice note: %d bytes, %v; want a TooBigError of 25 MB", len(data), err)
	}

	fake.Document(alice, alice, "a.txt", "text/plain", []byte("short"), 0, "")
	f, err := c.Fetch(ctx, alice, "file-3", 0)
	if err != nil || f.Data != nil || f.Size != 5 {
		t.Fatalf("Fetch = %+v, %v; want 5 bytes to open", f, err)
	}
	if err := os.WriteFile(fake.LocalPath(dir, "documents", "file_3"), []byte("longer now"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := f.Open(); !errors.Is(err, ErrLocalFile) {
		if r != nil {
			r.Close()
		}
		t.Fatalf("Open after the file changed: %v; want ErrLocalFile", err)
	}
}
