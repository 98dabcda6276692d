package bot

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// Forum topics that end. A topic is a session of its own (topics.go):
// its MCP processes, its browser context. Telegram sends a service message
// when a topic is closed (forum_topic_closed) but none when it is deleted;
// a send into a deleted topic fails with 400 "message thread not found"
// (TOPIC_DELETED), one into a closed topic with TOPIC_CLOSED for a bot
// that is not an admin. Either way the topic's session ends
// (Sessions.End): its turn is cancelled, its servers stopped, its
// conversation released — its files stay on disk, and a message in the
// topic (reopened) starts it again where it was. The log says so once a
// topic; scheduled runs of the topic pause on the failed delivery
// (deliver.go).

// topicEnds remembers the topics whose end was logged, and ends their
// sessions.
type topicEnds struct {
	end atomic.Pointer[func(chat.Place) bool] // Sessions.End, once the bot is built

	mu   sync.Mutex
	done map[chat.Place]bool
}

// topicGone is why a failed send says place's topic is gone or closed
// ("": it does not). Only a forum topic (Topic > 0) can be.
func topicGone(place chat.Place, err error) string {
	if place.Topic == 0 || err == nil || telegram.StatusOf(err) != http.StatusBadRequest {
		return ""
	}
	switch text := strings.ToLower(err.Error()); {
	case strings.Contains(text, "thread not found"), strings.Contains(text, "topic_deleted"):
		return "deleted"
	case strings.Contains(text, "topic_closed"):
		return "closed"
	}
	return ""
}

// checkSend ends place's session when err says its topic is gone, and
// logs it once a topic.
func (c *Chat) checkSend(place chat.Place, err error) {
	if why := topicGone(place, err); why != "" {
		c.endTopic(place, "the forum topic was "+why+" (a send failed)")
	}
}

// endTopic ends place's session, logging why the first time.
func (c *Chat) endTopic(place chat.Place, why string) {
	t := &c.topics
	t.mu.Lock()
	first := !t.done[place]
	if first {
		if t.done == nil {
			t.done = map[chat.Place]bool{}
		}
		t.done[place] = true
	}
	t.mu.Unlock()
	if !first {
		return
	}
	c.log.Warn(why+": its session ended (servers stopped, files kept on disk)", "chat", place)
	if end := t.end.Load(); end != nil {
		(*end)(place)
	}
}

// topicAlive forgets that place's topic ended: a message came from it
// (reopened), and a later end is logged again.
func (c *Chat) topicAlive(place chat.Place) {
	if place.Topic == 0 {
		return
	}
	c.topics.mu.Lock()
	delete(c.topics.done, place)
	c.topics.mu.Unlock()
}

// onTopicService handles a forum topic's service message and reports
// whether m was one: a closed topic's session ends; a reopened one starts
// again with its next message.
func (b *Bot) onTopicService(_ context.Context, m *models.Message) bool {
	switch place := placeOf(m); {
	case m.ForumTopicClosed != nil:
		b.chat.endTopic(place, "the forum topic was closed")
		return true
	case m.ForumTopicReopened != nil:
		b.chat.topicAlive(place)
		return true
	}
	return false
}
