package bot

import (
	"strings"

	"github.com/go-telegram/bot/models"
)

// What to do with a message, decided before the allowlist so that group
// chatter not meant for the bot never gets an answer.
type routeKind int

const (
	routeIgnore  routeKind = iota // not for us
	routeText                     // a message for the session
	routeCommand                  // one of our commands (or an unknown one in a private chat)
	routeFiles                    // a photo or a document, with its caption as the text
	routeMedia                    // addressed to us but nothing we read (a sticker, a voice message)
	routeEmpty                    // addressed to us with nothing but the mention
)

type route struct {
	kind routeKind
	text string  // routeText, routeFiles: the text, the bot's @mention removed
	cmd  command // routeCommand
}

// routeMessage decides whether m is for the bot (me) and what it is.
//
// Private chats: every message is for the bot; "/cmd@otherbot" is ignored.
//
// Groups and supergroups: a message is for the bot when it mentions
// @botname (the mention is removed from the text) or replies to one of the
// bot's messages. Commands count when addressed as /cmd@botname, or as a
// bare /cmd when it is one of our commands (Telegram clients add
// @botname themselves when a group has several bots, and in privacy mode a
// bot gets bare commands only when it was the last bot to speak); a bare
// unknown /cmd is taken to be another bot's and ignored.
//
// Messages from other bots, channels and anonymous senders are ignored.
func routeMessage(m *models.Message, me models.User) route {
	if m == nil || m.From == nil || m.From.IsBot {
		return route{}
	}
	group := m.Chat.Type == models.ChatTypeGroup || m.Chat.Type == models.ChatTypeSupergroup
	if m.Chat.Type != models.ChatTypePrivate && !group {
		return route{}
	}
	body, media := m.Text, false
	if body == "" {
		body, media = m.Caption, true
	}
	if cmd, ok := parseCommand(body); ok && !media {
		switch {
		case cmd.Bot != "" && !strings.EqualFold(cmd.Bot, me.Username):
			return route{}
		case group && cmd.Bot == "" && !knownCommand(cmd.Name):
			return route{}
		}
		return route{kind: routeCommand, cmd: cmd}
	}
	if group {
		mentioned := me.Username != "" && hasMention(body, me.Username)
		replied := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.ID && me.ID != 0
		if !mentioned && !replied {
			return route{}
		}
		body = stripMention(body, me.Username)
	}
	if media {
		if len(m.Photo) > 0 || m.Document != nil {
			return route{kind: routeFiles, text: body}
		}
		return route{kind: routeMedia}
	}
	if strings.TrimSpace(body) == "" {
		return route{kind: routeEmpty}
	}
	return route{kind: routeText, text: body}
}

// mentionAt returns the byte offsets of the first "@username" in s
// (case-insensitive, not inside a longer name or an e-mail address) at or
// after from, or -1.
func mentionAt(s, username string, from int) (int, int) {
	if username == "" {
		return -1, -1
	}
	needle := "@" + strings.ToLower(username)
	lower := strings.ToLower(s) // usernames are ASCII: offsets stay valid
	for i := from; i < len(lower); {
		j := strings.Index(lower[i:], needle)
		if j < 0 {
			return -1, -1
		}
		start, end := i+j, i+j+len(needle)
		before := start == 0 || !isNameRune(rune(s[start-1]))
		after := end == len(s) || !isNameRune(rune(s[end]))
		if before && after {
			return start, end
		}
		i = start + 1
	}
	return -1, -1
}

func hasMention(s, username string) bool {
	start, _ := mentionAt(s, username, 0)
	return start >= 0
}

// stripMention removes every @username mention of the bot, with the space
// after it, and trims the text.
func stripMention(s, username string) string {
	var b strings.Builder
	from := 0
	for {
		start, end := mentionAt(s, username, from)
		if start < 0 {
			break
		}
		b.WriteString(s[from:start])
		if end < len(s) && (s[end] == ' ' || s[end] == ',' || s[end] == ':') {
			end++
			if end < len(s) && s[end-1] != ' ' && s[end] == ' ' {
				end++
			}
		}
		from = end
	}
	b.WriteString(s[from:])
	return strings.TrimSpace(b.String())
}
