package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// streamed is an Attachment that opens data (as a local Bot API server's
// file does) and counts its opens; size is what it claims (0: len(data)).
func streamed(name, mime string, data []byte, size int64, opens *atomic.Int32) Attachment {
	if size == 0 {
		size = int64(len(data))
	}
	return Attachment{Name: name, MIMEType: mime, Size: size, Open: func() (io.ReadCloser, error) {
		opens.Add(1)
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// A file that opens (a local Bot API server's) is copied into uploads/
// as a stream and told to the model from the copy: a text file's head
// with its whole size, an image small enough shown. One the disk has no
// room for (beside the chat's disk budget) is never opened; one that
// cannot be opened, or that gives fewer bytes than its size, leaves
// nothing behind. Either way the chat is told why, the model gets the
// user's words with a note, and the conversation goes on.
func TestStreamedUploads(t *testing.T) {
	long := []byte(strings.Repeat("a line of the log\n", 4000)) // 72,000 bytes
	png := fakemcp.PNG1x1()
	cases := []struct {
		name     string
		file     func(opens *atomic.Int32) Attachment
		free     int64 // the disk's room (0: plenty)
		saved    []byte
		model    []string // in the model's message
		reply    string   // the chat's, before the answer ("": none)
		opens    int32
		hasImage bool
	}{
		{"a long text file", func(o *atomic.Int32) Attachment { return streamed("app.log", "text/plain", long, 0, o) }, 0, long,
			[]string{"uploads/app.log (text/plain, 70 KB)", "--- uploads/app.log ---\na line of the log\n",
				"[only the first 32 KB of 70 KB are shown; the whole file is uploads/app.log]"}, "", 1, false},
		{"an image without a type", func(o *atomic.Int32) Attachment { return streamed("dot.png", "", png, 0, o) }, 0, png,
			[]string{"[The user sent an image, saved in the workspace as uploads/dot.png (image/png"}, "", 1, true},
		{"no room on the disk", func(o *atomic.Int32) Attachment { return streamed("film.mkv", "video/x-matroska", long, 0, o) }, 100 << 10, nil,
			[]string{"[The user sent a file (film.mkv, 70 KB) that could not be kept: there is not enough room for it on the bot's disk (100 KB free, and 64 KB of it is kept for this chat's tools). The user was told.]"},
			"I could not keep film.mkv: there is not enough room for it on the bot's disk (100 KB free, and 64 KB of it is kept for this chat's tools).", 0, false},
		{"a file that cannot be opened", func(o *atomic.Int32) Attachment {
			return Attachment{Name: "gone.pdf", Size: 10, Open: func() (io.ReadCloser, error) { o.Add(1); return nil, errors.New("no such file") }}
		}, 0, nil, []string{"that could not be kept: it could not be read from the Telegram server's disk"},
			"I could not keep gone.pdf: it could not be read from the Telegram server's disk.", 1, false},
		{"a file shorter than its size", func(o *atomic.Int32) Attachment { return streamed("cut.txt", "text/plain", long[:100], 200, o) }, 0, nil,
			[]string{"that could not be kept: it changed while it was being received"},
			"I could not keep cut.txt: it changed while it was being received.", 1, false},
		{"a file longer than its size", func(o *atomic.Int32) Attachment { return streamed("grew.txt", "text/plain", long, 100, o) }, 0, nil,
			[]string{"that could not be kept: it changed while it was being received"},
			"I could not keep grew.txt: it changed while it was being received.", 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(context.Context, llm.Request) (llm.Response, error) { return llm.Response{Text: "done"}, nil }
			free := func(string) (int64, error) { return 1 << 40, nil }
			if tc.free > 0 {
				free = func(string) (int64, error) { return tc.free, nil }
			}
			e := newEnv(t, answer, envOptions{diskFree: free, diskBudget: 64 << 10})
			var opens atomic.Int32
			f := tc.file(&opens)
			if err := e.manager.Deliver(chat.In(5), Message{Text: "look", Files: []Attachment{f}}); err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.reply != "" {
				want = 2
			}
			texts := e.chat.waitTexts(t, chat.In(5), want)
			if tc.reply != "" && texts[0] != tc.reply {
				t.Errorf("the chat got %q; want %q first", texts, tc.reply)
			}
			msgs := e.model.Requests()[0].Messages
			user := msgs[len(msgs)-1]
			for _, w := range append(tc.model, "look") {
				if !strings.Contains(user.Parts[0].Text, w) {
					t.Errorf("the model's message lacks %q:\n%.500s", w, user.Parts[0].Text)
				}
			}
			if got := len(user.Parts) == 2 && user.Parts[1].Image != nil && bytes.Equal(user.Parts[1].Image.Data, png); got != tc.hasImage {
				t.Errorf("image shown = %v; want %v", got, tc.hasImage)
			}
			if n := opens.Load(); n != tc.opens {
				t.Errorf("opened %d times; want %d", n, tc.opens)
			}
			entries, _ := os.ReadDir(filepath.Join(e.manager.Workspace(chat.In(5)), "uploads"))
			switch {
			case tc.saved == nil && len(entries) != 0:
				t.Errorf("a file not kept left %v behind", entries)
			case tc.saved != nil:
				got, err := os.ReadFile(filepath.Join(e.manager.Workspace(chat.In(5)), "uploads", f.Name))
				if err != nil || !bytes.Equal(got, tc.saved) {
					t.Errorf("the copy: %d bytes, %v; want %d", len(got), err, len(tc.saved))
				}
			}
		})
	}
}
