package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// forum is the supergroup of the topic tests; the General topic is 0.
const forum = int64(-1001234500000)

// topicMarks name each topic of forum in what is said in it: the model
// answers with the mark of the message it answers, so every message the
// bot sends says which topic it belongs to.
var topicMarks = map[int]string{0: "general", 7: "t7", 9: "t9", 11: "t11"}

// byTopic is the model of the topic tests. The user's text starts with
// its topic's mark, then what to do: "hello" is answered with the number
// of messages the model was sent (the conversation's length), "write"
// writes <mark>.txt with the fake server and sends it to the chat, "read"
// reads old.txt, "slow" calls the fake's slow tool, "ask" asks the user
// with buttons (ask_user); the answer names the model.
func byTopic(req llmtest.Request) llmtest.Reply {
	words := strings.Fields(lastUserText(req))
	if len(words) < 2 {
		return llmtest.Text("?")
	}
	mark, what := words[0], words[1]
	res, after := toolResultText(req)
	switch {
	case what == "write" && !after:
		return call(fakemcp.ToolWriteFile, fmt.Sprintf(`{"path":%q,"bytes":3}`, mark+".txt"))
	case what == "write" && strings.HasPrefix(res, "wrote"):
		return call(session.SendToolName, fmt.Sprintf(`{"path":%q,"caption":%q}`, mark+".txt", mark+" file"))
	case what == "read" && !after:
		return call(session.ReadToolName, `{"path":"old.txt"}`)
	case what == "slow" && !after:
		return call(fakemcp.ToolSlow, `{}`)
	case what == "ask" && !after:
		return call("ask_user", fmt.Sprintf(`{"question":"%s which size?","options":["Small","Large"]}`, mark))
	case after:
		return llmtest.Text(fmt.Sprintf("%s: %s done (%s)", mark, what, res))
	}
	msgs, _ := req.JSON["messages"].([]any)
	return llmtest.Text(fmt.Sprintf("%s: I have %d messages, from %s", mark, len(msgs), req.Model()))
}

// say sends text to topic of forum, mentioning the bot (a group).
func (d *daemon) say(topic int, user int64, text string) {
	d.tg.TopicMessage(forum, user, topic, "@"+d.tg.Me().Username+" "+topicMarks[topic]+" "+text)
}

// inTopic are the messages the bot sent to topic of chat (0: no thread).
func (d *daemon) inTopic(chat int64, topic int) []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range d.tg.Sent(chat) {
		if m.ThreadID == topic {
			out = append(out, m)
		}
	}
	return out
}

// waitTopic waits for a message in topic of chat whose text holds substr
// (in its text now or any of its edits) and returns it.
func (d *daemon) waitTopic(chat int64, topic int, substr string) telegramtest.Message {
	d.t.Helper()
	var found telegramtest.Message
	if err := d.tg.WaitUntil(func() bool {
		for _, m := range d.inTopic(chat, topic) {
			if slices.ContainsFunc(m.History, func(s string) bool { return strings.Contains(s, substr) }) {
				found = m
				return true
			}
		}
		return false
	}, 20*time.Second); err != nil {
		var got []string
		for _, m := range d.inTopic(chat, topic) {
			got = append(got, m.Text)
		}
		d.t.Fatalf("topic %d of %d never got %q; got %q\nall: %q", topic, chat, substr, got, d.tg.Texts(chat))
	}
	return found
}

// Forum topics are conversations, through the real binary: a supergroup
// that becomes a forum keeps its conversation and workspace as its General
// topic; each topic has its own history, workspace, MCP processes (their
// working directory), model and /new; /mcp speaks of the topic it is sent
// in; a question with buttons is asked and answered in its topic; a turn a
// restart cut off is resumed in its topic; and
// every call the bot makes in the forum carries its topic's
// message_thread_id (none for General), or edits a message of that topic.
func TestE2EForumTopicsAreConversations(t *testing.T) {
	dataDir, tg := t.TempDir(), newTelegram(t)
	general := filepath.Join(dataDir, "chats", fmt.Sprint(forum))
	if err := os.MkdirAll(general, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(general, "old.txt"), []byte("kept from before topics"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := daemonOptions{dataDir: dataDir, tg: tg, modes: []string{fakemcp.ModeDisk, fakemcp.ModeLogCalls},
		extra: []string{"LLM_MODEL=", "LLM_MODELS=small,big"}}

	// Before: an ordinary supergroup, as every chat was.
	d := startDaemon(t, byTopic, o)
	d.tg.Message(forum, alice, "@"+d.tg.Me().Username+" general hello")
	d.waitTopic(forum, 0, "general: I have 2 messages")
	d.stop()

	// The chat turned into a forum: what it had is its General topic.
	d = startDaemon(t, byTopic, o)
	d.say(0, alice, "hello")
	d.waitTopic(forum, 0, "general: I have 4 messages")
	d.say(7, alice, "hello")
	d.waitTopic(forum, 7, "t7: I have 2 messages")
	d.say(9, bob, "hello")
	d.waitTopic(forum, 9, "t9: I have 2 messages")
	d.say(7, alice, "hello")
	d.waitTopic(forum, 7, "t7: I have 4 messages")

	// Workspaces and processes: each topic's server runs in its own.
	d.say(7, alice, "write")
	d.waitTopic(forum, 7, "t7: write done")
	d.say(9, bob, "write")
	d.waitTopic(forum, 9, "t9: write done")
	checkTopicProcesses(t, d)
	checkTopicFiles(t, d, general)
	d.say(0, alice, "read")
	d.waitTopic(forum, 0, "kept from before topics")
	// old.txt is in General's workspace, not in topic 7's.
	d.say(7, alice, "read")
	if m := d.waitTopic(forum, 7, "t7: read done"); strings.Contains(m.Text, "kept from before") {
		t.Errorf("topic 7 read General's file: %q", m.Text)
	}

	// /mcp speaks of its topic; /model and /new act on theirs.
	d.tg.TopicMessage(forum, alice, 11, "/mcp")
	d.waitTopic(forum, 11, "fake: not started")
	d.tg.TopicMessage(forum, bob, 9, "/mcp")
	d.waitTopic(forum, 9, "fake: running")
	d.tg.TopicMessage(forum, bob, 9, "/model")
	list := d.waitTopic(forum, 9, "model: small")
	if a := d.press(forum, bob, list, "big"); !strings.Contains(a.Text, "now big") {
		t.Errorf("press answered %q", a.Text)
	}
	d.tg.TopicMessage(forum, alice, 7, "/new")
	d.waitTopic(forum, 7, "New conversation started.")
	d.say(7, alice, "hello")
	d.waitTopic(forum, 7, "t7: I have 2 messages, from small")
	d.say(9, bob, "hello") // topic 9 kept its conversation, with its model
	if m := d.waitTopic(forum, 9, "from big"); strings.Contains(m.Text, "I have 2 messages") {
		t.Errorf("topic 9 lost its conversation: %q", m.Text)
	}

	// A question with buttons is asked in its topic, and answered there.
	d.say(9, bob, "ask")
	q := d.waitTopic(forum, 9, "t9 which size?")
	if a := d.press(forum, bob, q, "Large"); a.Text != "Large" {
		t.Errorf("the press answered %q", a.Text)
	}
	d.waitTopic(forum, 9, "t9: ask done")

	// A turn a restart cut off is resumed in its topic.
	d.say(9, bob, "slow")
	fakemcp.WaitForEvents(t, d.mcpLog, fakemcp.EventCall, 3, 20*time.Second) // write, write, slow
	d.stop()
	d = startDaemon(t, byTopic, o)
	d.waitTopic(forum, 9, session.RestartNotice)
	checkThreads(t, d.tg)
}

// checkTopicProcesses: topics 7 and 9 each started a server process of
// their own, in their own workspace.
func checkTopicProcesses(t *testing.T, d *daemon) {
	t.Helper()
	cwds := map[string]int{}
	for _, e := range fakemcp.Filter(fakemcp.ReadLog(t, d.mcpLog), fakemcp.EventStart) {
		cwds[e.Cwd] = e.PID
	}
	var pids []int
	for _, topic := range []int{7, 9} {
		ws := filepath.Join(d.dataDir, "chats", fmt.Sprintf("%d_t%d", forum, topic))
		pid, ok := cwds[ws]
		if !ok {
			t.Errorf("no server process ran in topic %d's workspace %s; starts in %v", topic, ws, cwds)
		}
		pids = append(pids, pid)
	}
	if pids[0] == pids[1] {
		t.Errorf("topics 7 and 9 share the process %d", pids[0])
	}
}

// checkTopicFiles: what a topic's tools wrote is in its workspace only (a
// sibling of the chat's, never inside it), its private state beside it,
// and the file sent went to its topic.
func checkTopicFiles(t *testing.T, d *daemon, general string) {
	t.Helper()
	for _, c := range []struct{ dir, file string }{
		{general + "_t7", "t7.txt"}, {general + "_t9", "t9.txt"},
	} {
		if _, err := os.Stat(filepath.Join(c.dir, c.file)); err != nil {
			t.Errorf("topic file: %v", err)
		}
		if _, err := os.Stat(filepath.Join(general, c.file)); !os.IsNotExist(err) {
			t.Errorf("%s is in General's workspace: %v", c.file, err)
		}
		private := filepath.Join(d.dataDir, "private", filepath.Base(c.dir), "transcript.jsonl")
		if _, err := os.Stat(private); err != nil {
			t.Errorf("topic transcript: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(general+"_t7", "t9.txt")); !os.IsNotExist(err) {
		t.Errorf("t9.txt is in topic 7's workspace: %v", err)
	}
	for _, topic := range []int{7, 9} {
		if !slices.ContainsFunc(d.inTopic(forum, topic), func(m telegramtest.Message) bool {
			return m.Method == "sendDocument" && m.File != nil && m.File.Filename == topicMarks[topic]+".txt"
		}) {
			t.Errorf("topic %d did not get its file", topic)
		}
	}
}

// threadMethods are the calls that say which topic they go to.
var threadMethods = []string{"sendMessage", "sendChatAction", "sendPhoto", "sendDocument", "sendVoice", "sendMessageDraft"}

// checkThreads: every call the bot made in the forum carries the topic it
// belongs to — a send its message_thread_id (none in General), an edit or
// deletion a message of that topic — and what it says names no other
// topic; each topic that had a turn was shown typing in it.
func checkThreads(t *testing.T, tg *telegramtest.Fake) {
	t.Helper()
	typing := map[int]bool{}
	for _, r := range tg.Requests() {
		if r.ChatID() != forum {
			continue
		}
		topic := r.ThreadID()
		switch {
		case slices.Contains(threadMethods, r.Method):
			if r.Status != 200 {
				t.Errorf("%s to topic %d refused (%d): %v", r.Method, topic, r.Status, r.Params)
			}
			if r.Method == "sendChatAction" {
				typing[topic] = true
			}
		case r.MessageID() != 0:
			m, ok := tg.SentMessage(forum, r.MessageID())
			if !ok {
				t.Errorf("%s of message %d the bot never sent", r.Method, r.MessageID())
			}
			topic = m.ThreadID
		default:
			t.Errorf("%s in the forum: neither a send nor a message's edit", r.Method)
			continue
		}
		mark, ok := topicMarks[topic]
		if !ok {
			t.Errorf("%s to unknown topic %d", r.Method, topic)
			continue
		}
		text := r.Params["text"] + r.Params["caption"]
		for other, om := range topicMarks {
			if other != topic && strings.Contains(text, om+":") {
				t.Errorf("%s to topic %d (%s) says %q", r.Method, topic, mark, text)
			}
		}
	}
	for _, topic := range []int{0, 7, 9} {
		if !typing[topic] {
			t.Errorf("topic %d was never shown typing", topic)
		}
	}
}

// An ordinary group's reply threads are no topics: a message in one goes
// to the group's one conversation, and the answers carry no thread (the
// fake refuses a thread id in a chat without topics).
func TestE2EGroupReplyThreadIsTheChat(t *testing.T) {
	d := startDaemon(t, byTopic, daemonOptions{})
	const group = int64(-1009876500000)
	mention := "@" + d.tg.Me().Username + " general hello"
	d.tg.Message(group, alice, mention)
	d.waitTopic(group, 0, "general: I have 2 messages")
	m := d.tg.NewMessage(group, alice, mention)
	m.MessageThreadID = 1 // a reply thread of an ordinary supergroup
	d.tg.Send(models.Update{Message: m})
	d.waitTopic(group, 0, "general: I have 4 messages")
	for _, r := range d.tg.Requests() {
		if r.ChatID() == group && (r.ThreadID() != 0 || r.Status != 200) {
			t.Errorf("%s in an ordinary group: thread %d, status %d", r.Method, r.ThreadID(), r.Status)
		}
	}
}

// A private chat with topics: each topic is a conversation of its own, the
// chat without a topic another, and what streams into a topic (drafts,
// messages) goes there.
func TestE2EPrivateChatTopics(t *testing.T) {
	d := startDaemon(t, byTopic, daemonOptions{})
	d.tg.TopicMessage(alice, alice, 7, "t7 hello")
	d.waitTopic(alice, 7, "t7: I have 2 messages")
	d.tg.Message(alice, alice, "general hello")
	d.waitTopic(alice, 0, "general: I have 2 messages")
	d.tg.TopicMessage(alice, alice, 7, "t7 hello")
	d.waitTopic(alice, 7, "t7: I have 4 messages")
	for _, r := range d.tg.Requests() {
		if r.ChatID() != alice || !slices.Contains(threadMethods, r.Method) {
			continue
		}
		if r.Status != 200 {
			t.Errorf("%s to topic %d refused (%d)", r.Method, r.ThreadID(), r.Status)
		}
		if text := r.Params["text"]; strings.Contains(text, "t7:") != (r.ThreadID() == 7) && text != "" {
			t.Errorf("%s in thread %d: %q", r.Method, r.ThreadID(), text)
		}
	}
}

// Two topics of one chat browse in browser contexts of their own (the
// real @playwright/mcp and Chromium, one browser shared by every chat,
// PLAYWRIGHT_SHARED's default): each topic's tabs are its own.
func TestBrowserTopicsKeepTheirOwnTabs(t *testing.T) {
	env := browserEnv(t)
	srv := site(t)
	d := startDaemon(t, browse, daemonOptions{extra: env})
	d.tg.TopicMessage(alice, alice, 7, "open "+srv.URL+"/seven-page")
	d.tg.TopicMessage(alice, alice, 9, "open "+srv.URL+"/nine-page")
	for topic, pages := range map[int][2]string{7: {"seven-page", "nine-page"}, 9: {"nine-page", "seven-page"}} {
		tabs := d.waitTopic(alice, topic, "tabs: ").Text
		if !strings.Contains(tabs, pages[0]) || strings.Contains(tabs, pages[1]) {
			t.Errorf("topic %d tabs: %q", topic, tabs)
		}
	}
	for _, topic := range []int{7, 9} {
		state := filepath.Join(d.dataDir, "private", fmt.Sprintf("%d_t%d", alice, topic))
		if _, err := os.Stat(state); err != nil {
			t.Errorf("topic %d's private folder: %v", topic, err)
		}
	}
}
