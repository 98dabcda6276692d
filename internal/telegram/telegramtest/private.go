package telegramtest

import (
	"strings"
)

// Users who have not started a private chat with the bot, or blocked it:
// Telegram refuses the bot's sends to their private chat with a 403 until
// they write to it (/start, which is also what unblocking sends).

// Telegram's descriptions of the two refusals.
const (
	notStartedDescription = "Forbidden: bot can't initiate conversation with a user"
	blockedDescription    = "Forbidden: bot was blocked by the user"
)

// NotStarted makes the bot's sends to these users' private chats fail as
// Telegram's do for users who never started the bot (403), until the user
// sends a message there (Message(user, user, "/start")).
func (f *Fake) NotStarted(users ...int64) { f.refuse(notStartedDescription, users) }

// Blocked makes the bot's sends to these users' private chats fail as for
// users who blocked the bot (403), until the user writes there again.
func (f *Fake) Blocked(users ...int64) { f.refuse(blockedDescription, users) }

func (f *Fake) refuse(why string, users []int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusing == nil {
		f.refusing = map[int64]string{}
	}
	for _, u := range users {
		f.refusing[u] = why
	}
}

// refusedBy is why Telegram refuses method to chat ("" when it does not):
// a send to the private chat of a user who has not started the bot or
// blocked it.
func (f *Fake) refusedBy(method string, chat int64) string {
	if chat <= 0 {
		return ""
	}
	m := strings.ToLower(method)
	if !strings.HasPrefix(m, "send") && !strings.HasPrefix(m, "edit") {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refusing[chat]
}

// startedLocked notes that user wrote to the bot in chat: their private
// chat takes the bot's messages from now on. f.mu must be held.
func (f *Fake) startedLocked(chat, user int64) {
	if chat == user {
		delete(f.refusing, user)
	}
}
