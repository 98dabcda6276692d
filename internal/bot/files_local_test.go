package bot

import (
	"io"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/speech/speechtest"
)

// Files from a local Bot API server (--local: getFile answers with a path
// on its disk): a document reaches the session as a file to stream (no
// bytes held), a photo as its bytes; a document over the local limit and
// a voice note over the transcription limit get their replies; a server
// whose folder the bot was not given gets a reply that says how to set it
// up, and the operator a log line that says so — without the token.
func TestFilesFromALocalBotAPIServer(t *testing.T) {
	cases := []struct {
		name    string
		noDir   bool  // TELEGRAM_LOCAL_FILES_DIR unset
		max     int64 // the local limit (0: 1 MB)
		send    func(h *harness)
		reply   string // "": none
		deliver string // the session's call ("": none)
		log     string
	}{
		{"a document", false, 0, func(h *harness) {
			h.fake.Document(alice, alice, "report.pdf", "application/pdf", []byte("%PDF-1.4 from the disk"), 0, "read it")
		}, "", `deliver 1001 read it +file "report.pdf" application/pdf 0`, ""},
		{"a photo", false, 0, func(h *harness) { h.fake.Photo(alice, alice, []byte("\xff\xd8\xff\xe0 jpeg"), "") },
			"", `deliver 1001  +file "" image/jpeg 9`, ""},
		{"a document over the limit", false, 0, func(h *harness) {
			h.fake.DocumentStream(alice, alice, "film.mkv", "video/x-matroska", 2<<20, 2<<20, "watch this")
		}, "That file is too big for me: I receive files up to 1 MB.",
			"deliver 1001 watch this\n[The user also sent a file over 1 MB, the most the bot receives: it was not received.]", ""},
		{"a document over the limit by its size on disk", false, 0, func(h *harness) {
			h.fake.DocumentStream(alice, alice, "film.mkv", "video/x-matroska", 100, 2<<20, "")
		}, "That file is too big for me: I receive files up to 1 MB.", "", ""},
		{"a voice note over 25 MB", false, 100 << 20, func(h *harness) { h.fake.Voice(alice, alice, []byte(speechtest.Ogg), 60, 30<<20, "") },
			"That recording is too big for me: I transcribe files up to 25 MB. Please try again, or write your message.", "", ""},
		{"a server whose folder the bot was not given", true, 0, func(h *harness) {
			h.fake.Document(alice, alice, "report.pdf", "application/pdf", []byte("%PDF-1.4"), 0, "")
		}, localPathReply, "", "TELEGRAM_LOCAL_FILES_DIR (telegram.local_files_dir) is not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := startBot(t, func(o *testOptions) {
				o.Voice.Transcriber = &fakeTranscriber{answer: "x"}
				if !tc.noDir {
					o.LocalFilesDir, o.MaxLocalFile = dir, 1<<20
					if tc.max > 0 {
						o.MaxLocalFile = tc.max
					}
				}
			})
			h.fake.ServeLocal(dir)
			tc.send(h)
			if tc.deliver != "" {
				if got := h.sess.waitCalls(t, "deliver", 1); got[0] != tc.deliver {
					t.Errorf("the session got %q; want %q", got[0], tc.deliver)
				}
			}
			if tc.reply != "" {
				if got := h.texts(t, alice, 1); got[0] != tc.reply {
					t.Errorf("the chat got %q; want %q", got[0], tc.reply)
				}
			}
			if tc.log != "" && !strings.Contains(h.logs.String(), tc.log) {
				t.Errorf("the log lacks %q:\n%s", tc.log, h.logs.String())
			}
			if strings.Contains(h.logs.String(), strings.SplitN(h.fake.Token(), ":", 2)[1]) {
				t.Errorf("the token is in the log:\n%s", h.logs.String())
			}
			if n := len(h.fake.RequestsFor("file")); n != 0 {
				t.Errorf("%d downloads over HTTP; want none", n)
			}
			if tc.name != "a document" {
				return
			}
			h.sess.mu.Lock()
			f := h.sess.files[0]
			h.sess.mu.Unlock()
			if f.Data != nil || f.Open == nil || f.Size != 22 {
				t.Fatalf("the session got %+v; want a file to open of 22 bytes", f)
			}
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got, _ := io.ReadAll(r); string(got) != "%PDF-1.4 from the disk" {
				t.Errorf("the file reads %q", got)
			}
		})
	}
}
