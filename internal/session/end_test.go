package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// End (a forum topic deleted or closed) stops the topic's MCP processes
// and keeps its files: the transcript and the workspace stay, and a later
// message goes on with the conversation where it was, with a new process.
// A place without a session has nothing to end.
func TestEndStopsProcessesAndKeepsTheConversation(t *testing.T) {
	e := newEnv(t, echoAgent, envOptions{})
	topic := chat.Place{Chat: -100123, Topic: 7}
	if e.manager.End(topic) {
		t.Error("End of a topic without a session said it ended one")
	}
	e.deliver(topic, "the first words")
	e.chat.waitTexts(t, topic, 1)
	pid := e.mcpPID(topic)
	if pid == 0 {
		t.Fatal("no MCP process")
	}
	if err := os.WriteFile(filepath.Join(e.manager.Workspace(topic), "notes.txt"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !e.manager.End(topic) {
		t.Fatal("End said the topic had no session")
	}
	testkit.WaitFor(t, "the topic's MCP process to stop", 10*time.Second, func() bool { return pidGone(pid) })
	if _, err := os.Stat(filepath.Join(e.manager.Private(topic), transcriptName)); err != nil {
		t.Errorf("the transcript is gone: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(e.manager.Workspace(topic), "notes.txt")); string(got) != "kept" {
		t.Errorf("the workspace's file: %q, %v", got, err)
	}
	if texts := e.chat.Texts(topic); len(texts) != 1 {
		t.Errorf("the topic was written to on its end: %q", texts)
	}

	e.deliver(topic, "and again")
	e.chat.waitTexts(t, topic, 2)
	reqs := e.model.Requests()
	var history []string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.Parts {
			history = append(history, p.Text)
		}
	}
	if joined := strings.Join(history, "|"); !strings.Contains(joined, "the first words") || !strings.Contains(joined, "and again") {
		t.Errorf("the conversation after the end: %q", history)
	}
	if e.mcpPID(topic) == pid {
		t.Error("the same process after the end")
	}
}
