package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// Elicitation end to end: the model calls the fake server's elicit tool
// (quiet: its result names the fields answered, never the answers), the
// server asks the chat its form (fakemcp.AskSchema: a name of at least two
// characters, an age with a default, a required boolean, an optional
// colour), and the chat answers through the fake Bot API.

const secretName = "Zebediah Quux" // typed by the user: for the server alone

// elicitThenReport calls elicit when asked to sign up, then says what it
// returned; it answers anything else with what it heard.
func elicitThenReport(req llmtest.Request) llmtest.Reply {
	if res, ok := toolResultText(req); ok {
		return llmtest.Text("server said: " + res)
	}
	if text := lastUserText(req); !strings.Contains(text, "sign me up") {
		return llmtest.Text("heard: " + text)
	}
	return call(fakemcp.ToolElicit, `{"quiet":true,"message":"Sign up for the newsletter"}`)
}

func startElicitDaemon(t *testing.T, o daemonOptions) *daemon {
	t.Helper()
	o.modes = append(o.modes, fakemcp.ModeAsk, fakemcp.ModeLogCalls)
	return startDaemon(t, elicitThenReport, o)
}

// waitOpen waits for the last message of chat that contains substr and
// still has its buttons, and returns it.
func (d *daemon) waitOpen(chat int64, substr string) telegramtest.Message {
	d.t.Helper()
	var q telegramtest.Message
	if err := d.tg.WaitUntil(func() bool {
		sent := d.tg.Sent(chat)
		for i := len(sent) - 1; i >= 0; i-- {
			if m := sent[i]; strings.Contains(m.Text, substr) && m.Keyboard != nil {
				q = m
				return true
			}
		}
		return false
	}, 20*time.Second); err != nil {
		d.t.Fatalf("chat %d never got an open question with %q; got %q", chat, substr, d.tg.Texts(chat))
	}
	return q
}

// waitClosed waits for msg to lose its buttons and end with outcome.
func (d *daemon) waitClosed(chat int64, msg telegramtest.Message, outcome string) {
	d.t.Helper()
	if !d.closed(chat, msg, outcome) {
		d.t.Fatalf("message %d never ended with %q: %q", msg.ID, outcome, d.tg.Texts(chat))
	}
}

// elicited are the fake server's answers to elicit.
func (d *daemon) elicited() []fakemcp.Event {
	return fakemcp.Filter(fakemcp.ReadLog(d.t, d.mcpLog), fakemcp.EventElicited)
}

// A form answered with typed and pressed answers (one typed answer bad,
// asked again): the server gets the content; the model, the transcript and
// the log never see what was typed.
func TestE2EElicitationAccepted(t *testing.T) {
	d := startElicitDaemon(t, daemonOptions{})
	d.tg.Message(alice, alice, "sign me up")
	d.waitText(alice, "<b>fake</b> asks:\nSign up for the newsletter")
	// The server's order of fields (mcp-go sends the properties sorted).
	age := d.waitOpen(alice, "<b>age</b> (1 of 4, optional)")
	d.tg.Message(alice, alice, "41")
	color := d.waitOpen(alice, "<b>color</b> (2 of 4, optional)")
	d.press(alice, alice, color, "Green")
	d.waitOpen(alice, "<b>Your name</b> (3 of 4, required)")
	d.tg.Message(alice, alice, "Z")
	d.waitOpen(alice, "⚠️ It must be at least 2 characters long. Please answer again.")
	d.tg.Message(alice, alice, secretName)
	sub := d.waitOpen(alice, "<b>Subscribe?</b> (4 of 4, required)")
	// A replayed button of a closed question, or forged data, changes
	// nothing.
	for _, data := range []string{color.Keyboard[0][0].Data, "q:" + strings.Repeat("A", 26) + ":0"} {
		if a, _ := d.tg.WaitAnswer(d.tg.Callback(alice, alice, sub.ID, data), 20*time.Second); a.Text != "This button has expired." {
			t.Errorf("forged %q answered %+v", data, a)
		}
	}
	d.press(alice, alice, sub, "Yes")
	d.waitText(alice, "server said: accept (fields: age, color, name, subscribe)")
	d.waitClosed(alice, age, "→ Answered by User 100.")
	d.waitClosed(alice, color, "→ Green (User 100)")

	ev := d.elicited()
	if len(ev) != 1 || ev[0].Reason != "accept" {
		t.Fatalf("the server got %+v", ev)
	}
	var content map[string]any
	_ = json.Unmarshal(ev[0].Arguments, &content)
	want := map[string]any{"name": secretName, "age": float64(41), "subscribe": true, "color": "green"}
	if !reflect.DeepEqual(content, want) {
		t.Errorf("the server got %v, want %v", content, want)
	}
	for i, r := range d.model.Requests() {
		if strings.Contains(string(r.Body), "Zebediah") || strings.Contains(string(r.Body), `"41"`) {
			t.Errorf("model request %d carries a typed answer: %s", i, r.Body)
		}
	}
	transcripts, _ := filepath.Glob(filepath.Join(d.dataDir, "private", fmt.Sprint(alice), "*.jsonl"))
	if len(transcripts) == 0 {
		t.Fatal("no transcript")
	}
	for _, p := range transcripts {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "Zebediah") {
			t.Errorf("%s holds a typed answer", p)
		}
	}
	if strings.Contains(d.logs.String(), "Zebediah") {
		t.Error("the log holds a typed answer")
	}
	if log := d.logs.String(); strings.Contains(log, `"answer":"Green"`) || strings.Contains(log, `"answer":"Yes"`) {
		t.Error("the log says which button answered the form")
	}
	// The turn is over: the chat's next message goes to the model again.
	d.tg.Message(alice, alice, "thanks")
	d.waitText(alice, "heard: thanks")
}

func TestE2EElicitationEnds(t *testing.T) {
	tests := []struct {
		name    string
		fake    map[string]any
		act     func(d *daemon, q telegramtest.Message)
		answer  string // the chat's last words
		outcome string // how the question ends
	}{
		{name: "declined", act: func(d *daemon, q telegramtest.Message) { d.press(alice, alice, q, "❌ Decline") },
			answer: "server said: decline", outcome: "❌ Declined by User 100."},
		{name: "cancelled", act: func(d *daemon, q telegramtest.Message) { d.press(alice, alice, q, "Cancel") },
			answer: "server said: cancel", outcome: "Cancelled by User 100."},
		{name: "/stop", act: func(d *daemon, _ telegramtest.Message) { d.tg.Message(alice, alice, "/stop") },
			answer: "Stopped.", outcome: "⏹ Stopped: cancelled."},
		{name: "no answer within the call timeout", fake: map[string]any{"callTimeoutSeconds": 4},
			act: func(*daemon, telegramtest.Message) {}, answer: "server said:", outcome: "⌛ No answer in time: cancelled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := startElicitDaemon(t, daemonOptions{fake: tt.fake})
			d.tg.Message(alice, alice, "sign me up")
			q := d.waitOpen(alice, "<b>age</b>")
			tt.act(d, q)
			d.waitText(alice, tt.answer)
			d.waitClosed(alice, q, tt.outcome)
			if a, err := d.tg.WaitAnswer(d.tg.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data), 20*time.Second); err != nil || a.Text != "This button has expired." {
				t.Errorf("a press after the end answered %+v, %v", a, err)
			}
		})
	}
}

// In a group the user who started the turn answers by replying; another
// member's reply meanwhile is a message for the model, as usual.
func TestE2EElicitationInAGroup(t *testing.T) {
	d := startElicitDaemon(t, daemonOptions{})
	mention := "@" + d.tg.Me().Username
	d.tg.Message(groupChat, alice, mention+" sign me up")
	age := d.waitOpen(groupChat, "<b>age</b>")
	if a := d.press(groupChat, bob, age, "❌ Decline"); !a.ShowAlert {
		t.Errorf("bob's press answered %+v", a)
	}
	d.tg.Reply(groupChat, bob, "bob wants coffee", age.ID)
	d.press(groupChat, alice, age, "Use the default (30)")
	color := d.waitOpen(groupChat, "<b>color</b>")
	d.press(groupChat, alice, color, "Skip")
	name := d.waitOpen(groupChat, "<b>Your name</b>")
	d.tg.Reply(groupChat, alice, secretName, name.ID)
	sub := d.waitOpen(groupChat, "<b>Subscribe?</b>")
	d.press(groupChat, alice, sub, "No")
	d.waitText(groupChat, "server said: accept (fields: age, name, subscribe)")
	var content map[string]any
	if ev := d.elicited(); len(ev) == 1 {
		_ = json.Unmarshal(ev[0].Arguments, &content)
	}
	if want := map[string]any{"name": secretName, "age": float64(30), "subscribe": false}; !reflect.DeepEqual(content, want) {
		t.Errorf("the server got %v, want %v", content, want)
	}
	// bob's message was queued behind the turn and answered after it.
	d.waitText(groupChat, "bob wants coffee")
	found := false
	for _, r := range d.model.Requests() {
		if strings.Contains(string(r.Body), "bob wants coffee") {
			found = true
		}
		if strings.Contains(string(r.Body), "Zebediah") {
			t.Error("a model request carries alice's typed answer")
		}
	}
	if !found {
		t.Error("bob's message never reached the model")
	}
}

// A form open when the bot stops is cancelled and closed; after the
// restart its buttons have expired, and what the user types goes to the
// model again (no form is open).
func TestE2EElicitationExpiresWithARestart(t *testing.T) {
	// The fake enforces Telegram's limits: the bot paces itself too (an
	// unpaced bot met 429s, and a closing edit held back by one was cut by
	// the stop).
	dataDir, tg := t.TempDir(), telegramtest.New(t)
	d := startElicitDaemon(t, daemonOptions{dataDir: dataDir, tg: tg, paced: true})
	d.tg.Message(alice, alice, "sign me up")
	q := d.waitOpen(alice, "<b>age</b>")
	d.stop()
	d.waitClosed(alice, q, "⏹ Stopped: cancelled.")
	d = startElicitDaemon(t, daemonOptions{dataDir: dataDir, tg: tg, paced: true})
	if a, err := tg.WaitAnswer(tg.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data), 20*time.Second); err != nil || a.Text != "This button has expired." {
		t.Errorf("a press after the restart answered %+v, %v", a, err)
	}
	d.tg.Message(alice, alice, "42")
	d.waitText(alice, "heard: 42")
}

// URL mode end to end: the server sends the chat to its own page; the
// user opens it (a GET of the link) and presses nothing; the server's
// notifications/elicitation/complete closes the question as done, and the
// server gets accept.
func TestE2EElicitationURLCompletedByTheServer(t *testing.T) {
	d := startDaemon(t, func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("server said: " + res)
		}
		return call(fakemcp.ToolElicitURL, `{"visit":true}`)
	}, daemonOptions{modes: []string{fakemcp.ModeAsk}})
	d.tg.Message(alice, alice, "log me in")
	q := d.waitOpen(alice, "asks you to open a page")
	link := regexp.MustCompile(`<a href="([^"]+)">`).FindStringSubmatch(q.Text)
	if link == nil || !strings.Contains(link[1], "/visit/") {
		t.Fatalf("no visit link in %q", q.Text)
	}
	resp, err := http.Get(html.UnescapeString(link[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	d.waitClosed(alice, q, "✅ fake reports it finished.")
	d.waitText(alice, "server said: accept")
	if a, err := d.tg.WaitAnswer(d.tg.Callback(alice, alice, q.ID, q.Keyboard[0][0].Data), 20*time.Second); err != nil || a.Text != "This button has expired." {
		t.Errorf("Done after the server's completion answered %+v, %v", a, err)
	}
}
