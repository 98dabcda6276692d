package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

var pairingCodeRe = regexp.MustCompile(`this code: ([A-Z0-9]{8})`)

// The operator adds a refused stranger on the host (volcanicbot allow)
// while the bot runs: the stranger's next message is answered; users lists
// them, revoke removes them, and a used code is refused naming why.
func TestE2EPairingOnTheHost(t *testing.T) {
	answer := func(req llmtest.Request) llmtest.Reply { return llmtest.Text("hello, " + lastUserText(req)) }
	d := startDaemon(t, answer, daemonOptions{})
	const stranger = int64(999)
	d.tg.Message(stranger, stranger, "let me in")
	msgs := d.waitSent(stranger, 1)
	m := pairingCodeRe.FindStringSubmatch(msgs[0].Text)
	if m == nil {
		t.Fatalf("refusal %q has no code", msgs[0].Text)
	}
	host := func(args ...string) (int, string) {
		var out, errOut strings.Builder
		code := run(t.Context(), args, &out, &errOut, d.environ)
		return code, out.String() + errOut.String()
	}
	if code, out := host("allow", m[1]); code != 0 || !strings.Contains(out, "added User 999 (@user999) (id 999)") {
		t.Fatalf("allow: exit %d: %s", code, out)
	}
	d.tg.Message(stranger, stranger, "am I in?")
	d.waitText(stranger, "hello, am I in?")

	if code, out := host("allow", m[1]); code != 1 || !strings.Contains(out, "used already, on the host") {
		t.Errorf("allow with a used code: exit %d: %s", code, out)
	}
	if code, out := host("users"); code != 0 || !strings.Contains(out, "999\tUser 999 (@user999)\ton the host") {
		t.Errorf("users: exit %d: %s", code, out)
	}
	if code, out := host("revoke", "999"); code != 0 || !strings.Contains(out, "removed 999") {
		t.Errorf("revoke: exit %d: %s", code, out)
	}
	if code, _ := host("revoke"); code != 2 {
		t.Errorf("revoke without an id: exit %d, want 2", code)
	}
	before := len(d.model.Requests())
	d.tg.Message(stranger, stranger, "still in?")
	d.waitLog("message dropped: refused already") // no second refusal within ten minutes: dropped, and said so in the log
	if n := len(d.model.Requests()); n != before {
		t.Errorf("a revoked user reached the model")
	}
}
