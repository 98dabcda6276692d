package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// A chat's model goes with every request made for it — its turns' steps
// and its servers' sampling — and with every reservation; a pick is kept
// in the chat's private folder, a name not offered is refused, and a
// pick no longer offered gives the default back.
func TestChatModel(t *testing.T) {
	b := &budget{left: 1 << 30, refused: make(chan struct{}, 10)}
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		switch {
		case req.System == "Answer briefly.":
			return llm.Response{Text: "42"}, nil
		case len(llmtest.LastToolResults(req)) > 0:
			return llm.Response{Text: "done"}, nil
		}
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "1", Name: fakemcp.ToolSample, Arguments: []byte(`{"prompt":"?"}`)}}}, nil
	}
	e := newEnv(t, answer, envOptions{modes: []string{fakemcp.ModeAsk}, sampling: true, allowance: b, models: []string{"small", "big"}})
	c, err := e.manager.Model(chat.In(40))
	if err != nil || c.Current != "small" || c.Gone != "" || !slices.Equal(c.Models, []string{"small", "big"}) {
		t.Fatalf("Model before a pick = %+v, %v", c, err)
	}
	turn := func(n int) []string {
		t.Helper()
		before := len(e.model.Requests())
		if err := e.manager.Deliver(chat.In(40), Message{Text: "go", From: 5}); err != nil {
			t.Fatal(err)
		}
		e.chat.waitTexts(t, chat.In(40), n)
		var models []string
		for _, r := range e.model.Requests()[before:] {
			models = append(models, r.Model)
		}
		return models
	}
	if got := turn(1); !slices.Equal(got, []string{"small", "small", "small"}) {
		t.Errorf("the default's turn (step, sampling, step) asked %q", got)
	}
	if c, err := e.manager.SetModel(chat.In(40), "big"); err != nil || c.Current != "big" {
		t.Fatalf("SetModel(big) = %+v, %v", c, err)
	}
	if got := turn(2); !slices.Equal(got, []string{"big", "big", "big"}) {
		t.Errorf("after /model big the turn asked %q", got)
	}
	if want := []string{"small", "small", "small", "big", "big", "big"}; !slices.Equal(b.models, want) {
		t.Errorf("reserved for %q, want %q", b.models, want)
	}
	if c, _ := e.manager.Model(chat.In(41)); c.Current != "small" {
		t.Errorf("another chat has %q", c.Current)
	}

	path := filepath.Join(e.manager.Private(chat.In(40)), modelFile)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the pick's file: %v, %v; want 0600 in the private folder", fi, err)
	}
	var unknown *UnknownModelError
	if _, err := e.manager.SetModel(chat.In(40), "huge"); !errors.As(err, &unknown) || !slices.Equal(unknown.Models, []string{"small", "big"}) {
		t.Errorf("SetModel(huge) = %v, want an *UnknownModelError with the list", err)
	}
	if c, _ := e.manager.Model(chat.In(40)); c.Current != "big" {
		t.Errorf("a refused pick changed the model to %q", c.Current)
	}

	// The operator took "big" off the list: the chat has the default, and
	// is told which it had.
	if err := os.WriteFile(path, []byte(`{"model":"retired"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := e.manager.Model(chat.In(40)); err != nil || c.Current != "small" || c.Gone != "retired" {
		t.Errorf("a pick no longer offered: %+v, %v", c, err)
	}
	if got := turn(3); !slices.Equal(got, []string{"small", "small", "small"}) {
		t.Errorf("with a retired pick the turn asked %q", got)
	}
	// A pick it cannot read: the default answers, and /model says why.
	if err := os.WriteFile(path, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	var me *ModelError
	if c, err := e.manager.Model(chat.In(40)); !errors.As(err, &me) || c.Current != "small" {
		t.Errorf("an unreadable pick: %+v, %v", c, err)
	}
}
