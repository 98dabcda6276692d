package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// The topics of a forum are sessions of their own: each has its
// conversation, its folders (siblings of the chat's) and its notes; the
// General topic is the chat as it was.
func TestTopicsAreSessions(t *testing.T) {
	count := func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Text: fmt.Sprintf("%d messages", len(req.Messages))}, nil
	}
	e := newEnv(t, count, envOptions{})
	general, topic := chat.In(-100), chat.Place{Chat: -100, Topic: 7}
	e.deliver(general, "one")
	e.chat.waitTexts(t, general, 1)
	e.deliver(topic, "one")
	e.deliver(general, "two")
	if got := e.chat.waitTexts(t, topic, 1); got[0] != "1 messages" {
		t.Errorf("the topic's first answer %q: it saw another conversation", got[0])
	}
	if got := e.chat.waitTexts(t, general, 2); got[1] != "3 messages" {
		t.Errorf("General's second answer %q", got[1])
	}
	for _, c := range []struct {
		p    chat.Place
		name string
	}{{general, "-100"}, {topic, "-100_t7"}} {
		if got, want := e.manager.Workspace(c.p), filepath.Join(e.dataDir, "chats", c.name); got != want {
			t.Errorf("Workspace(%v) = %s, want %s", c.p, got, want)
		}
		if _, err := os.Stat(filepath.Join(e.dataDir, "private", c.name, "transcript.jsonl")); err != nil {
			t.Errorf("%v's transcript: %v", c.p, err)
		}
	}
}

// A turn a restart cut off in a topic is resumed in that topic.
func TestResumeFindsTopics(t *testing.T) {
	e := newEnv(t, echoAgent, envOptions{})
	topic := chat.Place{Chat: -100, Topic: 7}
	priv := e.manager.Private(topic)
	if err := os.MkdirAll(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	writeTranscript(t, e, topic, `{"role":"user","parts":[{"kind":"text","text":"hello"}]}`+"\n")
	if err := os.WriteFile(turnMarkPath(priv), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := e.manager.Resume(); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v; want the topic", n, err)
	}
	if got := e.chat.waitTexts(t, topic, 1); got[0] != RestartNotice {
		t.Errorf("the topic got %q", got)
	}
}
