package bot

import (
	"context"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Texts of /voice.
const (
	voiceUsage     = "Usage: /voice on or /voice off."
	voiceOnReply   = "Voice answers are on in this chat: each answer also comes as a voice note (its text, without code, tables or links). /voice off stops them."
	voiceOffReply2 = "Voice answers are off in this chat. /voice on turns them on."
	voiceNoTTS     = "I can't speak here: text-to-speech is not set up (the operator sets TTS_BASE_URL, or uses an OpenAI key)."
	voiceBroken    = "Sorry, I could not change this chat's voice answers. The operator has the details in the log."
)

// cmdVoice is /voice (whether this chat's answers are read aloud) and
// /voice on|off. Anyone the bot allows may switch it, in a group too: it
// changes only what the chat receives, and the allowances do not count
// it (the speech endpoint's cost is the operator's, bounded by the
// answers).
func (b *Bot) cmdVoice(ctx context.Context, place chat.Place, args []string) {
	if !b.chat.CanSpeak() {
		b.reply(ctx, place, voiceNoTTS)
		return
	}
	if len(args) == 0 {
		on, err := b.sessions.Voice(place)
		if err != nil {
			b.log.Error("/voice: not read", "chat", place, "err", errText(b.scrub, err))
		}
		b.reply(ctx, place, map[bool]string{true: voiceOnReply, false: voiceOffReply2}[on])
		return
	}
	var on bool
	switch strings.ToLower(strings.Join(args, " ")) {
	case "on":
		on = true
	case "off":
	default:
		b.reply(ctx, place, voiceUsage)
		return
	}
	if err := b.sessions.SetVoice(place, on); err != nil {
		b.log.Error("/voice: not changed", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, voiceBroken)
		return
	}
	b.reply(ctx, place, map[bool]string{true: voiceOnReply, false: voiceOffReply2}[on])
}
