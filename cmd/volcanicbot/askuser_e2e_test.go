package main

import (
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// The model's ask_user question through the real binary: buttons in the
// chat, a press is the tool's result, and the model answers from it.
func TestE2EAskUserAnsweredByAPress(t *testing.T) {
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("noted: " + res)
		}
		return call("ask_user", `{"question":"Which size?","options":["Small","Large"]}`)
	}, daemonOptions{})
	d.tg.Message(alice, alice, "order me a shirt")
	if err := d.tg.WaitUntil(func() bool {
		for _, m := range d.tg.Sent(alice) {
			if len(m.Keyboard) == 2 && strings.Contains(m.Text, "Which size?") {
				if _, err := d.tg.Press(alice, alice, m.ID, "Large"); err != nil {
					t.Error(err)
				}
				return true
			}
		}
		return false
	}, 20*time.Second); err != nil {
		t.Fatalf("no question with buttons: %q", d.tg.Texts(alice))
	}
	d.waitText(alice, `chose "Large".`)
}
