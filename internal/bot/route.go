package bot

import (
	"slices"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// What to do with a message, decided before the allowlist so that group
// chatter not meant for the bot never gets an answer.
type routeKind int

const (
	routeIgnore  routeKind = iota // not for us
	routeText                     // a message for the session
	routeCommand                  // one of our commands (or an unknown one in a private chat)
	routeFiles                    // a photo or a document, with its caption as the text
	routeVoice                    // a voice note, an audio file or a round video, with its caption as the text
	routeMedia                    // addressed to us but nothing we read (a sticker, a location)
	routeEmpty                    // addressed to us with nothing but the mention
)

type route struct {
	kind routeKind
	text string  // routeText, routeFiles, routeVoice: the text, the bot's @mention removed
	cmd  command // routeCommand
}

// routeMessage decides whether m is for the bot (me) and what it is.
//
// Private chats: every message is for the bot; "/cmd@otherbot" is ignored.
//
// Groups and supergroups: a message is for the bot when it mentions
// @botname (the mention is removed from the text) or replies to one of the
// bot's messages. A mention is a "mention" entity Telegram marked in the
// text (or the caption), never found by searching the text. Commands count
// when addressed as /cmd@botname, or as a bare /cmd when it is one of our
// commands (Telegram clients add @botname themselves when a group has
// several bots, and in privacy mode a bot gets bare commands only when it
// was the last bot to speak); a bare unknown /cmd is taken to be another
// bot's and ignored.
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
	body, ents, media := m.Text, m.Entities, false
	if body == "" {
		body, ents, media = m.Caption, m.CaptionEntities, true
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
		mentions := botMentions(body, ents, me.Username)
		replied := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.ID && me.ID != 0
		if len(mentions) == 0 && !replied {
			return route{}
		}
		body = stripMentions(body, mentions)
	}
	if media {
		if len(m.Photo) > 0 || m.Document != nil {
			return route{kind: routeFiles, text: body}
		}
		if _, ok := voiceOf(m); ok {
			return route{kind: routeVoice, text: body}
		}
		return route{kind: routeMedia}
	}
	if strings.TrimSpace(body) == "" {
		return route{kind: routeEmpty}
	}
	return route{kind: routeText, text: body}
}

// span is a byte range of a text.
type span struct{ start, end int }

// botMentions returns where text mentions the bot (username), in order and
// without overlaps: the "mention" entities Telegram marks in text whose
// text is "@username" in any case. Entity offsets count UTF-16 code units;
// they come from the sender's side, so any value is accepted and none is
// trusted: offsets are clamped to the text, and an entity that does not
// frame "@username" exactly (another user, a longer name, a bad offset) is
// not ours.
func botMentions(text string, ents []models.MessageEntity, username string) []span {
	if username == "" {
		return nil
	}
	var out []span
	for _, e := range ents {
		if e.Type != models.MessageEntityTypeMention || e.Length <= 0 {
			continue
		}
		// A UTF-16 length is at most the byte length: clamping first keeps
		// the sum from overflowing.
		off, n := min(e.Offset, len(text)), min(e.Length, len(text))
		start, end := tgformat.ByteOffset(text, off), tgformat.ByteOffset(text, off+n)
		if name, ok := strings.CutPrefix(text[start:end], "@"); ok && equalFoldASCII(name, username) {
			out = append(out, span{start, end})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	kept := out[:0]
	for _, sp := range out {
		if len(kept) == 0 || sp.start >= kept[len(kept)-1].end {
			kept = append(kept, sp)
		}
	}
	return kept
}

// equalFoldASCII reports whether a and b are equal ignoring ASCII case
// (usernames are ASCII; strings.EqualFold would also take "ſ" for "s").
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// stripMentions removes the mentions (from botMentions) from s, each with
// a ',' or ':' right after it and one space after that, and trims the
// text.
func stripMentions(s string, mentions []span) string {
	if len(mentions) == 0 {
		return s
	}
	var b strings.Builder
	from := 0
	for _, sp := range mentions {
		b.WriteString(s[from:sp.start])
		end := sp.end
		if end < len(s) && (s[end] == ',' || s[end] == ':') {
			end++
		}
		if end < len(s) && s[end] == ' ' {
			end++
		}
		from = end
	}
	b.WriteString(s[from:])
	return strings.TrimSpace(b.String())
}
