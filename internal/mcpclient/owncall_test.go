package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// The bot's own call (the live view's): the whole text over the model's
// cap, nothing saved in the workspace; an error result is an error; a tool
// not in the catalogue is called all the same; an unknown server is an
// error.
func TestCallOwn(t *testing.T) {
	cfg, _ := fakeServer(t, "fake")
	h := newHarness(t, nil, cfg)
	s := h.session("")
	h.client.maxResultTokens = 2000 // the 3000 lines are about 7,700 tokens
	text, err := s.CallOwn(context.Background(), "fake", fakemcp.ToolLongText, []byte(`{}`))
	if err != nil || strings.Count(text, "\n") < fakemcp.LongTextLines-1 || !strings.Contains(text, "line 3000") {
		t.Fatalf("long text: %d lines, %v", strings.Count(text, "\n"), err)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace(), ResultsDir)); !os.IsNotExist(err) {
		t.Errorf("the bot's own call saved a result in the workspace: %v", err)
	}
	if _, err := s.CallOwn(context.Background(), "fake", fakemcp.ToolFail, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), fakemcp.FailText) {
		t.Errorf("an error result: %v", err)
	}
	if _, err := s.CallOwn(context.Background(), "nope", fakemcp.ToolEcho, []byte(`{}`)); err == nil {
		t.Error("an unknown server answered")
	}
	if text, err := s.CallOwn(context.Background(), "fake", fakemcp.ToolEcho, []byte(`{"text":"own"}`)); err != nil || !strings.Contains(text, "own") {
		t.Errorf("echo: %q, %v", text, err)
	}
}
