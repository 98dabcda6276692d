package bot

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

func TestSendTextHTML(t *testing.T) {
	h := newBot(t, nil)
	if err := h.bot.Chat().SendText(context.Background(), chat.In(alice), "**bold** and `code` https://example.com"); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent(alice)
	if len(sent) != 1 || sent[0].ParseMode != "HTML" || !sent[0].NoPreview || !strings.Contains(sent[0].Text, "<b>bold</b>") {
		t.Errorf("sent %+v", sent)
	}
}

func TestSendTextLongIsSplit(t *testing.T) {
	h := newBot(t, nil)
	para := strings.Repeat("word ", 199) + "end.\n\n" // 1000 characters
	if err := h.bot.Chat().SendText(context.Background(), chat.In(alice), strings.Repeat(para, 10)); err != nil {
		t.Fatal(err)
	}
	if sent := h.fake.Sent(alice); len(sent) < 3 {
		t.Errorf("%d messages for 10000 characters", len(sent))
	}
}

func TestSendTextFallsBackToPlain(t *testing.T) {
	h := newBot(t, nil)
	h.fake.FailNext("sendMessage", http.StatusBadRequest, "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 3", 0)
	if err := h.bot.Chat().SendText(context.Background(), chat.In(alice), "some **bold** text"); err != nil {
		t.Fatal(err)
	}
	reqs := h.fake.RequestsFor("sendMessage")
	if len(reqs) != 2 || reqs[0].Params["parse_mode"] != "HTML" || reqs[1].Params["parse_mode"] != "" {
		t.Fatalf("requests %+v", reqs)
	}
	sent := h.fake.Sent(alice)
	if len(sent) != 1 || sent[0].Text != "some bold text" || sent[0].ParseMode != "" || !sent[0].NoPreview {
		t.Errorf("sent %+v", sent)
	}
	if len(h.sleeps.all()) != 0 {
		t.Errorf("a 400 was retried: sleeps %v", h.sleeps.all())
	}
}

// A chat's calls are retried by the sender: a 429 holds the chat for its
// retry_after, a 5xx backs off (never closer than the chat's pace), five
// tries in all; a 403 is final. The bubble's clock times the requests.
func TestRetry(t *testing.T) {
	tests := []struct {
		name string
		fail [][2]int        // status, retry_after
		gaps []time.Duration // between the tries
		ok   bool
	}{
		{"429 honours retry_after", [][2]int{{429, 1}}, []time.Duration{time.Second}, true},
		{"429 twice", [][2]int{{429, 3}, {429, 1}}, []time.Duration{3 * time.Second, time.Second}, true},
		{"5xx backs off", [][2]int{{500, 0}, {502, 0}, {503, 0}}, []time.Duration{time.Second, time.Second, 2 * time.Second}, true},
		{"gives up after 5 tries", [][2]int{{500, 0}, {500, 0}, {500, 0}, {500, 0}, {500, 0}},
			[]time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second}, false},
		{"403 is final", [][2]int{{403, 0}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newBubbleBot(t, nil)
				for _, f := range tt.fail {
					h.fake.FailNext("sendMessage", f[0], "", f[1])
				}
				err := h.bot.Chat().SendText(context.Background(), chat.In(alice), "hello")
				if (err == nil) != tt.ok {
					t.Fatalf("err = %v, want ok=%v", err, tt.ok)
				}
				reqs := h.fake.RequestsFor("sendMessage")
				var gaps []time.Duration
				for i := 1; i < len(reqs); i++ {
					gaps = append(gaps, reqs[i].Time.Sub(reqs[i-1].Time))
				}
				if !slices.Equal(gaps, tt.gaps) {
					t.Errorf("gaps between tries %v, want %v", gaps, tt.gaps)
				}
				if got := len(h.fake.Texts(alice)); got != map[bool]int{true: 1, false: 0}[tt.ok] {
					t.Errorf("%d messages sent", got)
				}
				if !tt.ok && !strings.Contains(h.logs.String(), "message not delivered") || !tt.ok && !strings.Contains(h.logs.String(), "chat=1001") {
					t.Errorf("final failure not logged with the chat id:\n%s", h.logs)
				}
			})
		})
	}
}

func writePNG(t *testing.T, dir, name string, w, h int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

func TestSendFile(t *testing.T) {
	dir := t.TempDir()
	shot, shotPNG := writePNG(t, dir, "page.png", 64, 48)
	strip, _ := writePNG(t, dir, "strip.png", 1, 300)
	big := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(big, append(append([]byte(nil), shotPNG...), make([]byte, 11<<20)...), 0o600); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("just text"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		caption string
		fail    string   // FailNext("sendPhoto", 400, fail)
		methods []string // requests, in order
		final   string   // the method of the stored message
	}{
		{"png photo", shot, "a screenshot", "", []string{"sendPhoto"}, "sendPhoto"},
		{"refused dimensions", shot, "", "Bad Request: PHOTO_INVALID_DIMENSIONS", []string{"sendPhoto", "sendDocument"}, "sendDocument"},
		{"image process failed", shot, "", "Bad Request: IMAGE_PROCESS_FAILED", []string{"sendPhoto", "sendDocument"}, "sendDocument"},
		{"real bad dimensions", strip, "", "", []string{"sendPhoto", "sendDocument"}, "sendDocument"},
		{"over 10 MB", big, "", "", []string{"sendDocument"}, "sendDocument"},
		{"text file", notes, "notes", "", []string{"sendDocument"}, "sendDocument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newBot(t, nil)
			if tt.fail != "" {
				h.fake.FailNext("sendPhoto", http.StatusBadRequest, tt.fail, 0)
			}
			if err := h.bot.Chat().SendFile(context.Background(), chat.In(alice), outgoing(t, tt.path), tt.caption); err != nil {
				t.Fatal(err)
			}
			var methods []string
			for _, r := range h.fake.Requests() {
				methods = append(methods, r.Method)
			}
			if !slices.Equal(methods, tt.methods) {
				t.Errorf("requests %v, want %v", methods, tt.methods)
			}
			sent := h.fake.Sent(alice)
			if len(sent) != 1 || sent[0].Method != tt.final || sent[0].File == nil || sent[0].Text != tt.caption {
				t.Fatalf("sent %+v", sent)
			}
			want, _ := os.ReadFile(tt.path)
			if f := sent[0].File; f.Filename != filepath.Base(tt.path) || !bytes.Equal(f.Data, want) {
				t.Errorf("uploaded %s (%d bytes), want %s (%d bytes)", f.Filename, len(f.Data), filepath.Base(tt.path), len(want))
			}
		})
	}
	// The photo the fake received is a valid PNG.
	h := newBot(t, nil)
	if err := h.bot.Chat().SendFile(context.Background(), chat.In(alice), outgoing(t, shot), ""); err != nil {
		t.Fatal(err)
	}
	reqs := h.fake.RequestsFor("sendPhoto")
	img, err := png.Decode(bytes.NewReader(reqs[0].Files["photo"].Data))
	if err != nil || img.Bounds().Dx() != 64 || reqs[0].ChatID() != alice {
		t.Errorf("received photo: %v, %v", img, err)
	}
}

// outgoing opens path as the session gives a file to send.
func outgoing(t *testing.T, path string) session.OutgoingFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return session.OutgoingFile{Name: filepath.Base(path), Content: f, Size: fi.Size()}
}

// What the session opened is what is sent: the bot never reads the file
// by its name, which may be gone or name something else by then.
func TestSendFileSendsWhatWasOpened(t *testing.T) {
	h := newBot(t, nil)
	dir := t.TempDir()
	shot, data := writePNG(t, dir, "page.png", 10, 10)
	file := outgoing(t, shot)
	if err := os.Remove(shot); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, []byte("something else"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.bot.Chat().SendFile(context.Background(), chat.In(alice), file, ""); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent(alice)
	if len(sent) != 1 || sent[0].Method != "sendPhoto" || !bytes.Equal(sent[0].File.Data, data) {
		t.Errorf("sent %+v", sent)
	}
}

func TestSendFileRetriesUpload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		shot, data := writePNG(t, t.TempDir(), "page.png", 10, 10)
		h.fake.FailNext("sendPhoto", http.StatusTooManyRequests, "", 2)
		if err := h.bot.Chat().SendFile(context.Background(), chat.In(alice), outgoing(t, shot), ""); err != nil {
			t.Fatal(err)
		}
		reqs := h.fake.RequestsFor("sendPhoto")
		if len(reqs) != 2 || !bytes.Equal(reqs[1].Files["photo"].Data, data) {
			t.Fatalf("the retried upload lost its body: %d requests", len(reqs))
		}
		if gap := reqs[1].Time.Sub(reqs[0].Time); gap != 2*time.Second {
			t.Errorf("retried after %v, want the 429's 2s", gap)
		}
	})
}

func TestSendFileLongCaption(t *testing.T) {
	h := newBot(t, nil)
	notes := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(notes, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	caption := strings.Repeat("c", 1500)
	if err := h.bot.Chat().SendFile(context.Background(), chat.In(alice), outgoing(t, notes), caption); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Sent(alice)
	if len(sent) != 2 || sent[0].Text != "" || sent[1].Text != caption {
		t.Errorf("sent %+v", sent)
	}
}

// A long answer cut off after its first messages (the bot shutting down
// while Telegram held the rest back) says how many went out, and
// SendTextFrom sends exactly the rest: the chat reads every part once, in
// order, as if nothing had happened.
func TestSendTextCutOffSaysWhatWentOutAndTheRestFollows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newBubbleBot(t, nil)
		para := strings.Repeat("word ", 199) + "end.\n\n"
		text := strings.Repeat(para, 10)
		if err := h.bot.Chat().SendText(context.Background(), chat.In(bob), text); err != nil {
			t.Fatal(err)
		}
		whole := h.fake.Texts(bob)
		if len(whole) < 3 {
			t.Fatalf("%d messages: the text is not long enough", len(whole))
		}

		// The second message gets a 429 to wait out for an hour; the
		// shutdown comes within it.
		h.fake.SetLimits(telegramtest.Limits{ChatEvery: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := h.bot.Chat().SendText(ctx, chat.In(alice), text)
		if err == nil || chat.SentParts(err) != 1 {
			t.Fatalf("cut off after one message: err %v, SentParts %d", err, chat.SentParts(err))
		}
		h.fake.SetLimits(telegramtest.NoLimits)
		if err := h.bot.Chat().SendTextFrom(context.Background(), chat.In(alice), text, 1); err != nil {
			t.Fatal(err)
		}
		if got := h.fake.Texts(alice); !slices.Equal(got, whole) {
			t.Errorf("the chat read %d messages, want the %d of the whole text once each", len(got), len(whole))
		}
		if err := h.bot.Chat().SendTextFrom(context.Background(), chat.In(alice), text, len(whole)); err != nil || len(h.fake.Texts(alice)) != len(whole) {
			t.Errorf("nothing left to send: err %v, %d messages", err, len(h.fake.Texts(alice)))
		}
	})
}
