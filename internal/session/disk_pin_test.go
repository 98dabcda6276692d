package session

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A photo the user sends is the live conversation's from the moment the
// transcript holds it: the disk watcher's prune, which runs between turns
// on its own goroutine, never removes it, even when the chat sent the same
// photo in a conversation it left with /new (the transcript then keeps
// the one file it has, as old as that conversation) and no tool step ran
// since.
func TestDiskWatcherSparesAPhotoOfTheLiveConversation(t *testing.T) {
	const kb = 1 << 10
	e := newEnv(t, func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "started"}, nil
		}
		if llmtest.LastUserText(req) == "start" {
			return toolCall("c1", fakemcp.ToolEcho, `{"text":"hi"}`), nil
		}
		return llm.Response{Text: "ok"}, nil
	}, envOptions{modes: []string{fakemcp.ModeDisk}, server: withOutput, diskBudget: 512 * kb, diskCheckEvery: time.Hour})
	photo := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 25*kb) // 100 KB
	send := func(text string) {
		t.Helper()
		if err := e.manager.Deliver(chat.In(1), Message{Text: text, Files: []Attachment{{MIMEType: "image/png", Data: photo}}}); err != nil {
			t.Fatal(err)
		}
	}

	// A conversation with the photo, left with /new an hour ago.
	send("look")
	e.chat.waitTexts(t, chat.In(1), 1)
	if err := e.manager.Reset(context.Background(), chat.In(1)); err != nil {
		t.Fatal(err)
	}
	images, _ := filepath.Glob(filepath.Join(e.manager.Private(chat.In(1)), imagesDir, "*"))
	if len(images) != 1 {
		t.Fatalf("images: %q", images)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(images[0], old, old); err != nil {
		t.Fatal(err)
	}
	// The new conversation starts the chat's server, then the user sends
	// the same photo, and the model answers without a tool.
	e.deliver(chat.In(1), "start")
	e.chat.waitTexts(t, chat.In(1), 2)
	send("look again")
	e.chat.waitTexts(t, chat.In(1), 3)
	// The server saves files of its own meanwhile: the chat is over its
	// budget, and the watcher prunes (its own ticks are an hour apart: the
	// test makes them).
	ws := e.manager.Workspace(chat.In(1))
	writeSized(t, ws, ".out/page-1.yml", 300*kb)
	writeSized(t, ws, ".out/page-2.yml", 300*kb)
	e.manager.mu.Lock()
	s := e.manager.sessions[chat.In(1)]
	e.manager.mu.Unlock()
	for range 2 {
		s.checkDisk(time.Now())
	}

	if _, err := os.Stat(images[0]); err != nil {
		t.Errorf("the live conversation's photo was pruned: %v", err)
	}
	e.deliver(chat.In(1), "what was it?")
	e.chat.waitTexts(t, chat.In(1), 4)
	reqs := e.model.Requests()
	var seen bool
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.Parts {
			if p.Image != nil && bytes.Equal(p.Image.Data, photo) {
				seen = true
			}
		}
	}
	if !seen {
		t.Errorf("the model no longer gets the photo of the live conversation")
	}
}
