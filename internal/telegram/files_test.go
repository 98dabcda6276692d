package telegram

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// A file over 20 MB is ErrTooBig at once, never retried and never held
// whole, however it shows: Telegram refusing getFile, or a download
// longer than the size getFile gave.
func TestDownloadTooBig(t *testing.T) {
	cases := []struct {
		name      string
		send      func(f *telegramtest.Fake) string
		downloads int
	}{
		{"refused by getFile", func(f *telegramtest.Fake) string {
			f.Document(alice, alice, "big.pdf", "application/pdf", []byte("x"), 30<<20, "")
			return "file-1"
		}, 0},
		{"a download longer than its size", func(f *telegramtest.Fake) string {
			f.DocumentStream(alice, alice, "liar.pdf", "application/pdf", 1000, 1<<30, "")
			return "file-1"
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A fake on a real listener: the in-process one would hold the
			// whole stream.
			fake := telegramtest.New(t)
			c, err := New(Options{Token: fake.Token(), APIURL: fake.URL(), Sleep: func(context.Context, time.Duration) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			id := tc.send(fake)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			data, err := c.Download(ctx, alice, id, 0)
			if !errors.Is(err, ErrTooBig) || data != nil {
				t.Fatalf("Download = %d bytes, %v; want ErrTooBig", len(data), err)
			}
			if n := len(fake.RequestsFor("getFile")); n != 1 {
				t.Errorf("%d getFile calls, want 1", n)
			}
			if n := len(fake.RequestsFor("file")); n != tc.downloads {
				t.Errorf("%d downloads, want %d (no retries)", n, tc.downloads)
			}
		})
	}
}
