package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

func (s *fakeSessions) Model(chatID chat.Place) (session.ModelChoice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.modelList
	if list == nil {
		list = []string{"test-model"}
	}
	c := session.ModelChoice{Current: list[0], Models: slices.Clone(list)}
	switch p := s.picks[chatID]; {
	case p == "":
	case slices.Contains(list, p):
		c.Current = p
	default:
		c.Gone = p
	}
	return c, nil
}

func (s *fakeSessions) SetModel(chatID chat.Place, name string) (session.ModelChoice, error) {
	c, _ := s.Model(chatID)
	if !slices.Contains(c.Models, name) {
		return session.ModelChoice{}, &session.UnknownModelError{Name: name, Models: c.Models}
	}
	s.record(context.Background(), fmt.Sprintf("model %v %s", chatID, name))
	s.mu.Lock()
	if s.picks == nil {
		s.picks = map[chat.Place]string{}
	}
	s.picks[chatID] = name
	s.mu.Unlock()
	return s.Model(chatID)
}

var threeModels = []string{"gpt-4o-mini", "gpt-4o", "o3"}

// /model lists the models as buttons with the chat's marked; /model
// <name> switches; a name not offered is refused with the list.
func TestModelCommand(t *testing.T) {
	tests := []struct {
		name   string
		chat   int64
		text   string
		reply  string
		picked []string
	}{
		{"list", alice, "/model", "This chat's model: gpt-4o-mini (the default).\n" +
			"Press one to switch this chat to it, or send /model <name>. The models offered: gpt-4o-mini, gpt-4o, o3.", nil},
		{"switch", alice, "/model gpt-4o", "This chat's model is now gpt-4o. It answers from your next message on.", []string{"model 1001 gpt-4o"}},
		{"switch in a group", group, "/model@volcanic_test_bot o3", "This chat's model is now o3. It answers from your next message on.",
			[]string{fmt.Sprintf("model %v o3", group)}},
		{"back to the default", alice, "/model gpt-4o-mini", "This chat's model is now gpt-4o-mini (the default). It answers from your next message on.",
			[]string{"model 1001 gpt-4o-mini"}},
		{"refused", alice, "/model gpt-5", `There is no model "gpt-5" here. The models offered: gpt-4o-mini, gpt-4o, o3.`, nil},
		{"refused with spaces", alice, "/model gpt 4o", `There is no model "gpt 4o" here. The models offered: gpt-4o-mini, gpt-4o, o3.`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startBot(t, nil)
			h.sess.mu.Lock()
			h.sess.modelList = threeModels
			h.sess.mu.Unlock()
			h.fake.Message(tt.chat, alice, tt.text)
			if got := h.texts(t, tt.chat, 1)[0]; got != tt.reply {
				t.Errorf("reply %q, want %q", got, tt.reply)
			}
			if got := h.sess.callsWith("model"); !slices.Equal(got, tt.picked) {
				t.Errorf("picks %q, want %q", got, tt.picked)
			}
		})
	}
}

// A press of a /model button switches the chat it was pressed in and
// marks the new one; a stranger's press, data the bot never made and a
// model no longer offered change nothing.
func TestModelPresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startBubbleBot(t, nil)
		h.sess.modelList = threeModels
		h.fake.Message(group, alice, "/model")
		msgs, err := h.fake.WaitSent(group, 1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		list := msgs[0]
		if got, want := labels(list), [][]string{{"✅ gpt-4o-mini"}, {"gpt-4o"}, {"o3"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("buttons %q, want %q", got, want)
		}
		h.pressAll(t, []press{
			{chat: group, user: stranger, label: "o3", answer: strangerPress, alert: true},
			{chat: group, user: alice, data: modelPrefix + "gpt-5", answer: modelGone, alert: true},
			{chat: group, user: alice, data: modelKeyPrefix + "AAAAAAAAAAAAAAAA", answer: modelGone, alert: true},
		}, list)
		if got := h.sess.callsWith("model"); len(got) != 0 {
			t.Fatalf("picks %q after refused presses", got)
		}
		h.pressAll(t, []press{{chat: group, user: bob, label: "o3", answer: "This chat's model is now o3. It answers from your next message on."}}, list)
		settle()
		now := h.fake.Sent(group)[0]
		if got, want := labels(now), [][]string{{"gpt-4o-mini"}, {"gpt-4o"}, {"✅ o3"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("buttons after the press %q, want %q", got, want)
		}
		if !strings.HasPrefix(now.Text, "This chat's model: o3.") {
			t.Errorf("text after the press %q", now.Text)
		}
		// The button's data sent from another chat switches that chat only.
		h.pressAll(t, []press{{chat: bob, user: bob, label: "gpt-4o", answer: "This chat's model is now gpt-4o. It answers from your next message on."}}, list)
		want := []string{fmt.Sprintf("model %v o3", group), "model 1002 gpt-4o"}
		if got := h.sess.callsWith("model"); !slices.Equal(got, want) {
			t.Errorf("picks %q, want %q", got, want)
		}
	})
}

// A pick no longer offered is said so; a single model gets no buttons;
// a model name too long for a button's data gets a key.
func TestModelMessage(t *testing.T) {
	text, kb := modelMessage(session.ModelChoice{Current: "a", Models: []string{"a", "b"}, Gone: "old"})
	if !strings.HasPrefix(text, "This chat had old, which is no longer offered: it has the default again.\nThis chat's model: a (the default).") || kb == nil {
		t.Errorf("gone: %q, %v", text, kb)
	}
	text, kb = modelMessage(session.ModelChoice{Current: "a", Models: []string{"a"}})
	if text != "This chat's model: a (the default). It is the only one offered." || kb != nil {
		t.Errorf("one model: %q, %v", text, kb)
	}
	if text, kb := modelMessage(session.ModelChoice{}); !strings.HasPrefix(text, "No model is named") || kb != nil {
		t.Errorf("no models: %q, %v", text, kb)
	}
	long := strings.Repeat("m", 80)
	if d := modelData(long); len(d) > 64 || !strings.HasPrefix(d, modelKeyPrefix) {
		t.Errorf("data of a long name %q", d)
	}
	if d := modelData("#x"); !strings.HasPrefix(d, modelKeyPrefix) {
		t.Errorf("data of a name like a key %q", d)
	}
}
