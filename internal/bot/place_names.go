package bot

import (
	"sync"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// maxPlaceNames bounds the names kept: past it the table starts over (a
// name missing only makes a hand-off's private message say "a group").
const maxPlaceNames = 4096

// placeNames are the titles of the groups and forum topics the bot has
// seen messages in, for the messages it sends elsewhere about them (a
// group's hand-off link, sent to a user's private chat). Telegram names
// a topic only on its first message, which every message of the topic
// replies to.
type placeNames struct {
	mu     sync.Mutex
	groups map[int64]string
	topics map[chat.Place]string
}

func newPlaceNames() *placeNames {
	return &placeNames{groups: map[int64]string{}, topics: map[chat.Place]string{}}
}

// note keeps the names m tells of its group and topic.
func (n *placeNames) note(m *models.Message) {
	if m == nil || m.Chat.ID >= 0 {
		return
	}
	topic := ""
	if r := m.ReplyToMessage; r != nil && m.IsTopicMessage && r.ID == m.MessageThreadID && r.ForumTopicCreated != nil {
		topic = r.ForumTopicCreated.Name
	}
	if m.ForumTopicCreated != nil && m.MessageThreadID > 0 {
		topic = m.ForumTopicCreated.Name
	}
	if m.ForumTopicEdited != nil && m.ForumTopicEdited.Name != "" && m.MessageThreadID > 0 {
		topic = m.ForumTopicEdited.Name
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.groups)+len(n.topics) >= maxPlaceNames {
		n.groups, n.topics = map[int64]string{}, map[chat.Place]string{}
	}
	if m.Chat.Title != "" {
		n.groups[m.Chat.ID] = m.Chat.Title
	}
	if topic != "" {
		n.topics[chat.Place{Chat: m.Chat.ID, Topic: m.MessageThreadID}] = topic
	}
}

// of is the group's title and the topic's name ("" where unknown).
func (n *placeNames) of(place chat.Place) (group, topic string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.groups[place.Chat], n.topics[place]
}
