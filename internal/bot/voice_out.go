package bot

import (
	"bytes"
	"context"
	"strconv"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/speech"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// Voice answers: a chat that asked for them (/voice on) gets every answer
// also as voice notes, after the text — its prose read aloud (code blocks,
// tables and links' addresses left out: speech.Spoken), in at most
// maxVoiceParts notes of up to speech.MaxInput characters each; a longer
// answer's last note says the rest is in the text. The text answer stays:
// the voice is a copy.

// Speaker reads text aloud as Ogg Opus (speech.Speaker satisfies it). Its
// errors carry what the user is told (chat.UserMessage).
type Speaker interface {
	Speak(ctx context.Context, text string) ([]byte, error)
}

// maxVoiceParts is the most voice notes one answer is read in: three of
// 4,096 characters are about fifteen minutes of speech.
const maxVoiceParts = 3

// voiceFailed prefixes what the chat is told when an answer could not be
// read aloud.
const voiceFailed = "(I could not read this answer aloud: "

// CanSpeak reports whether answers can be read aloud here (a speaker is
// configured): /voice on needs it.
func (c *Chat) CanSpeak() bool { return c.speaker != nil }

// SendVoiceAnswer reads the answer markdown aloud into place, as voice
// notes after its text. A failure is told to the chat in one line (the
// text answer is there); nothing is sent for an answer with no prose.
func (c *Chat) SendVoiceAnswer(ctx context.Context, place chat.Place, markdown string) error {
	if c.speaker == nil {
		return nil
	}
	parts := speech.Parts(speech.Spoken(markdown), speech.MaxInput, maxVoiceParts)
	for i, p := range parts {
		audio, err := c.speaker.Speak(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			c.log.Warn("an answer was not read aloud", "chat", place, "part", i+1, "of", len(parts), "err", c.scrub(err.Error()))
			msg, ok := chat.UserMessage(err)
			if !ok {
				msg = "the text-to-speech service failed"
			}
			return c.sendPlain(ctx, place, voiceFailed+msg+")")
		}
		if err := c.sendVoice(ctx, place, audio, i); err != nil {
			return err
		}
	}
	return nil
}

// sendVoice uploads an Ogg Opus voice note, the answer's part n.
func (c *Chat) sendVoice(ctx context.Context, place chat.Place, audio []byte, n int) error {
	name := "answer-" + strconv.FormatInt(time.Now().Unix(), 10) + "-" + strconv.Itoa(n+1) + ".ogg"
	_, err := telegram.Send(ctx, c.tg, place.Chat, "sendVoice", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return c.tg.API().SendVoice(ctx, &tgbot.SendVoiceParams{ChatID: place.Chat, MessageThreadID: place.Topic,
			Voice: &models.InputFileUpload{Filename: name, Data: bytes.NewReader(audio)}})
	})
	if err != nil && ctx.Err() == nil {
		c.log.Error("a voice note not delivered", "chat", place, "err", errText(c.scrub, err))
	}
	return err
}
