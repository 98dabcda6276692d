package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

// The memory end to end: the model adds a note with the built-in memory
// tool when the user says "remember …"; the note is in the system prompt
// of the chat's next requests, after /new and after a restart of the
// binary; /memory lists it with a button that deletes it, from before the
// restart too; a note with a known secret is refused.

// wireSystem is the system prompt of a wire request, in either format.
func wireSystem(req llmtest.Request) string {
	var out strings.Builder
	add := func(c any) {
		switch c := c.(type) {
		case string:
			out.WriteString(c)
		case []any:
			for _, b := range c {
				if bm, ok := b.(map[string]any); ok {
					out.WriteString(fmt.Sprint(bm["text"]))
				}
			}
		}
	}
	add(req.JSON["system"]) // Anthropic
	msgs, _ := req.JSON["messages"].([]any)
	for _, m := range msgs { // OpenAI
		if mm, ok := m.(map[string]any); ok && (mm["role"] == "system" || mm["role"] == "developer") {
			add(mm["content"])
		}
	}
	return out.String()
}

const anaNote = "1. My name is Ana"

// rememberer adds "remember <note>" to the memory and says what the tool
// answered; anything else it answers with whether its system prompt holds
// Ana's note.
func rememberer(req llmtest.Request) llmtest.Reply {
	if res, ok := toolResultText(req); ok {
		return llmtest.Text("noted: " + res)
	}
	if note, ok := strings.CutPrefix(lastUserText(req), "remember "); ok {
		args, _ := json.Marshal(map[string]string{"action": "add", "text": note})
		return call("memory", string(args))
	}
	return llmtest.Text(fmt.Sprintf("knows Ana: %v", strings.Contains(wireSystem(req), anaNote)))
}

// lastRequest is the model's last request.
func (d *daemon) lastRequest() llmtest.Request {
	d.t.Helper()
	reqs := d.model.Requests()
	if len(reqs) == 0 {
		d.t.Fatal("no model request")
	}
	return reqs[len(reqs)-1]
}

// sentWith is the last message of chat whose text starts with prefix.
func (d *daemon) sentWith(chat int64, prefix string) telegramtest.Message {
	d.t.Helper()
	var found telegramtest.Message
	for _, m := range d.tg.Sent(chat) {
		if strings.HasPrefix(m.Text, prefix) {
			found = m
		}
	}
	if found.ID == 0 {
		d.t.Fatalf("chat %d has no message starting %q: %q", chat, prefix, d.tg.Texts(chat))
	}
	return found
}

func TestE2EMemoryAcrossNewAndRestart(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dataDir, tg := t.TempDir(), newTelegram(t)
			o := daemonOptions{provider: provider, dataDir: dataDir, tg: tg}
			d := startDaemon(t, rememberer, o)
			d.tg.Message(alice, alice, "remember My name is Ana")
			d.waitText(alice, "noted: Saved as note 1")
			d.tg.Message(alice, alice, "/new")
			d.waitText(alice, "New conversation started.")
			d.tg.Message(alice, alice, "who am I?")
			d.waitText(alice, "knows Ana: true")
			sys := d.lastRequest()
			if s := wireSystem(sys); strings.Index(s, "## Memory") < strings.Index(s, "You are volcanicbot") ||
				strings.Index(s, anaNote) > strings.Index(s, "Current date:") {
				t.Errorf("the memory is not between the fixed text and the date:\n%s", s)
			}
			if strings.Contains(lastUserText(sys), "Ana") || strings.Contains(string(sys.Body), "remember My name") {
				t.Error("the conversation before /new reached the request")
			}
			d.tg.Message(bob, bob, "who am I?")
			d.waitText(bob, "knows Ana: false")
			d.tg.Message(alice, alice, "/memory")
			d.waitText(alice, "Kept in memory in this chat")
			list := d.sentWith(alice, "Kept in memory in this chat")
			if !strings.Contains(list.Text, anaNote) || len(list.Keyboard) != 1 {
				t.Errorf("/memory: %q, buttons %+v", list.Text, list.Keyboard)
			}
			d.stop()

			// Kept in the chat's private folder, 0600; nothing in the
			// workspace its servers see.
			fi, err := os.Stat(filepath.Join(dataDir, "private", strconv.FormatInt(alice, 10), "memory.json"))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the memory file: %v, %v", fi, err)
			}
			filepath.WalkDir(filepath.Join(dataDir, "chats"), func(path string, e os.DirEntry, err error) error {
				if err == nil && strings.Contains(e.Name(), "memory") {
					t.Errorf("%s is in a workspace", path)
				}
				return nil
			})

			d = startDaemon(t, rememberer, o)
			d.tg.Message(alice, alice, "after a restart")
			waitTexts(t, d, alice, "knows Ana: true", 2)
			// The list sent before the restart still works; a stranger's
			// press does nothing.
			if a := d.press(alice, 999, list, "🗑 1. My name is Ana"); !a.ShowAlert || !strings.Contains(a.Text, "not allowed") {
				t.Errorf("a stranger's press answered %+v", a)
			}
			if a := d.press(alice, alice, list, "🗑 1. My name is Ana"); a.Text != "Deleted: My name is Ana" {
				t.Errorf("the press answered %+v", a)
			}
			d.tg.Message(alice, alice, "and now?")
			d.waitText(alice, "knows Ana: false")
			if s := wireSystem(d.lastRequest()); !strings.Contains(s, "No notes are kept yet.") {
				t.Errorf("after the delete:\n%s", s)
			}
		})
	}
}

// A note that holds a secret the bot knows (here its own API key) is
// refused, the refusal does not repeat it, and nothing is kept; /memory
// clear empties the memory.
func TestE2EMemorySecretAndClear(t *testing.T) {
	d := startDaemon(t, rememberer, daemonOptions{})
	d.tg.Message(alice, alice, "remember my key is sk-e2e-openai-0123456789")
	d.waitText(alice, "noted: ERROR: not saved: the text contains a secret this bot knows")
	d.tg.Message(alice, alice, "remember My name is Ana")
	d.waitText(alice, "noted: Saved as note 1")
	data, err := os.ReadFile(filepath.Join(d.dataDir, "private", strconv.FormatInt(alice, 10), "memory.json"))
	if err != nil || strings.Contains(string(data), "sk-e2e") || !strings.Contains(string(data), "My name is Ana") {
		t.Errorf("the memory file: %s, %v", data, err)
	}
	d.tg.Message(alice, alice, "/memory clear")
	d.waitText(alice, "Memory cleared: 1 note deleted.")
	d.tg.Message(alice, alice, "who am I?")
	d.waitText(alice, "knows Ana: false")
}
