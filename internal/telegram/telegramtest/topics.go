package telegramtest

import (
	"strconv"

	"github.com/go-telegram/bot/models"
)

// Forum topics. A chat becomes a forum (a supergroup with topics, or a
// private chat with topics) when the first topic message is sent in it
// (TopicMessage). The fake then checks every message_thread_id the bot
// sends as Telegram does: a thread the chat has no topic of — the General
// topic's id 1 included, which takes no thread id — and any thread id in a
// chat without topics are refused with "message thread not found".

// TopicMessage queues a text message from user in the forum topic topic of
// chat and returns its id: a topic message (message_thread_id,
// is_topic_message) of a chat with topics (is_forum) that, as Telegram
// sends it, replies to the topic's first message (forum_topic_created,
// whose id is the topic's; here one the bot created). topic 0 is the
// General topic, whose messages carry no thread: the chat is still a
// forum. The topic is one the fake knows from now on.
func (f *Fake) TopicMessage(chatID, userID int64, topic int, text string) int {
	f.mu.Lock()
	f.openTopicLocked(chatID, topic)
	me := f.me
	f.mu.Unlock()
	m := f.NewMessage(chatID, userID, text)
	m.Chat.IsForum = true
	if topic != 0 {
		m.MessageThreadID, m.IsTopicMessage = topic, true
		m.ReplyToMessage = &models.Message{ID: topic, From: &me, Chat: m.Chat, Date: m.Date, MessageThreadID: topic,
			IsTopicMessage: true, ForumTopicCreated: &models.ForumTopicCreated{Name: "Topic " + strconv.Itoa(topic)}}
	}
	return f.send(m)
}

// openTopicLocked makes chat a forum with topic (0: only the General
// topic).
func (f *Fake) openTopicLocked(chatID int64, topic int) {
	if f.topics == nil {
		f.topics = map[int64]map[int]bool{}
	}
	if f.topics[chatID] == nil {
		f.topics[chatID] = map[int]bool{}
	}
	if topic != 0 {
		f.topics[chatID][topic] = true
	}
}

// threadOf checks a send's message_thread_id against chat's topics and
// returns it (0: none).
func (f *Fake) threadOf(chat int64, p map[string]string) (int, error) {
	s := p["message_thread_id"]
	if s == "" {
		return 0, nil
	}
	thread, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest("invalid message_thread_id")
	}
	if thread == 0 {
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.topics[chat][thread] {
		return 0, badRequest("message thread not found")
	}
	if f.closedTopics[chat][thread] {
		return 0, badRequest("TOPIC_CLOSED")
	}
	return thread, nil
}

// DeleteTopic deletes topic of chat, as a user with the right does:
// Telegram tells the bot nothing, and refuses every send into it from now
// on ("message thread not found").
func (f *Fake) DeleteTopic(chatID int64, topic int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.topics[chatID], topic)
}

// CloseTopic closes topic of chat, as user does: the topic gets the
// service message forum_topic_closed (whose id it returns), and every send
// of the bot (not an admin) into it is refused with TOPIC_CLOSED until
// ReopenTopic.
func (f *Fake) CloseTopic(chatID, userID int64, topic int) int {
	f.mu.Lock()
	if f.closedTopics == nil {
		f.closedTopics = map[int64]map[int]bool{}
	}
	if f.closedTopics[chatID] == nil {
		f.closedTopics[chatID] = map[int]bool{}
	}
	f.closedTopics[chatID][topic] = true
	f.mu.Unlock()
	m := f.topicService(chatID, userID, topic)
	m.ForumTopicClosed = &models.ForumTopicClosed{}
	return f.send(m)
}

// ReopenTopic reopens topic of chat, as user does: the topic gets the
// service message forum_topic_reopened (whose id it returns), and sends
// into it are taken again.
func (f *Fake) ReopenTopic(chatID, userID int64, topic int) int {
	f.mu.Lock()
	delete(f.closedTopics[chatID], topic)
	f.mu.Unlock()
	m := f.topicService(chatID, userID, topic)
	m.ForumTopicReopened = &models.ForumTopicReopened{}
	return f.send(m)
}

// topicService is a service message of user in topic of chat, to fill in.
func (f *Fake) topicService(chatID, userID int64, topic int) *models.Message {
	m := f.NewMessage(chatID, userID, "")
	m.Chat.IsForum = true
	m.MessageThreadID, m.IsTopicMessage = topic, true
	return m
}

// wireChatLocked is chat as the Bot API shows it in a message.
func (f *Fake) wireChatLocked(chatID int64) models.Chat {
	c := chatOf(chatID)
	_, c.IsForum = f.topics[chatID]
	return c
}

// ThreadID is the request's message_thread_id parameter (0 if absent).
func (r Request) ThreadID() int {
	id, _ := strconv.Atoi(r.Params["message_thread_id"])
	return id
}

// MessageID is the request's message_id parameter (0 if absent).
func (r Request) MessageID() int {
	id, _ := strconv.Atoi(r.Params["message_id"])
	return id
}

// SentMessage returns the message id the bot sent in chat, with its
// edits and thread; false when it sent none of that id.
func (f *Fake) SentMessage(chatID int64, id int) (Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.findLocked(chatID, id); m != nil {
		return *m, true
	}
	return Message{}, false
}
