package bot

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// The data of /memory's buttons: "mem:<key>" deletes the note whose
// memoryKey it is. A press is settled against the chat's notes as they
// are when it comes, so the buttons keep no state and work after a
// restart; data made up by a client can do no more than the presser may
// anyway with /memory — delete one of that chat's notes.
const memoryPrefix = "mem:"

// memoryListRunes is how much of a message the notes may take: the
// header and the numbers fit in the rest of Telegram's 4096.
const memoryListRunes = 3600

// Texts of /memory.
const (
	noMemory = "Nothing is kept in memory in this chat. Ask me to remember something (your name, a preference) " +
		"and I keep it here, also after /new."
	memoryUnreadable = "Sorry, I could not read this chat's memory. The operator has the details in the log; " +
		"/memory clear empties it."
	memoryUnchanged = "Sorry, I could not change this chat's memory. The operator has the details in the log."
	memoryGone      = "That note was deleted already."
	memoryUsage     = "/memory lists what I keep in memory in this chat, with a button to delete each note; " +
		"/memory clear deletes them all."
)

// cmdMemory is /memory: the chat's notes, each with a button that
// deletes it; /memory clear deletes them all. Anyone the bot allows may
// use it and press them, in a group too: the notes are the chat's, and
// every member the bot answers shapes what it keeps.
func (b *Bot) cmdMemory(ctx context.Context, place chat.Place, from int64, args []string) {
	switch {
	case len(args) == 1 && strings.EqualFold(args[0], "clear"):
		b.clearMemory(ctx, place, from)
		return
	case len(args) > 0:
		b.reply(ctx, place, memoryUsage)
		return
	}
	list, err := b.sessions.Memory(place)
	if err != nil {
		b.log.Error("/memory: the notes are not read", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, memoryUnreadable)
		return
	}
	text, kb := memoryMessage(list, b.scrub)
	if _, err := telegram.Send(ctx, b.tg, place.Chat, "sendMessage", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return b.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: place.Chat, MessageThreadID: place.Topic, Text: text, LinkPreviewOptions: noPreview, ReplyMarkup: kb})
	}); err != nil {
		b.log.Error("message not delivered", "chat", place, "err", err.Error())
	}
}

// clearMemory is /memory clear.
func (b *Bot) clearMemory(ctx context.Context, place chat.Place, from int64) {
	n, err := b.sessions.ClearMemory(place)
	if err != nil {
		b.log.Error("/memory clear: the notes are not deleted", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, memoryUnchanged)
		return
	}
	b.log.Info("/memory clear", "chat", place, "user", from, "notes", n)
	switch {
	case n < 0:
		b.reply(ctx, place, "Memory cleared. (It could not be read, so I cannot say how many notes it held.)")
	case n == 0:
		b.reply(ctx, place, noMemory)
	default:
		b.reply(ctx, place, fmt.Sprintf("Memory cleared: %s deleted.", plural(n, "note")))
	}
}

// memoryMessage is the /memory text (plain, scrubbed) and its keyboard
// (nil without notes). When the notes would not fit one message, each is
// cut to its share.
func memoryMessage(list []session.MemoryEntry, scrub func(string) string) (string, models.ReplyMarkup) {
	if len(list) == 0 {
		return noMemory, nil
	}
	total := 0
	for _, e := range list {
		total += utf8.RuneCountInString(e.Text)
	}
	share := 0 // no cut
	if total > memoryListRunes {
		share = max(memoryListRunes/len(list), 20)
	}
	var s strings.Builder
	s.WriteString("Kept in memory in this chat (I see these in every message, also after /new):\n")
	kb := &models.InlineKeyboardMarkup{}
	for i, e := range list {
		text := scrub(e.Text)
		shown := text
		if share > 0 {
			shown = truncate(text, share)
		}
		fmt.Fprintf(&s, "%d. %s\n", i+1, shown)
		kb.InlineKeyboard = append(kb.InlineKeyboard, []models.InlineKeyboardButton{
			{Text: truncate(fmt.Sprintf("🗑 %d. %s", i+1, text), 40), CallbackData: memoryPrefix + memoryKey(e.Text)},
		})
	}
	s.WriteString("Press a button to delete a note; /memory clear deletes them all.")
	return s.String(), kb
}

// memoryKey names a note in a button's data (Telegram takes 64 bytes,
// notes are longer): 96 bits of the hash of its text.
func memoryKey(text string) string { return buttonKey(text) }

// memoryPressed deletes the note the button pressed on message msgID
// names, answers the press with what was done, and edits the message to
// the chat's notes as they are now.
func (b *Bot) memoryPressed(ctx context.Context, place chat.Place, msgID int, cqID string, user int64, data string) {
	list, err := b.sessions.Memory(place)
	if err != nil {
		b.log.Error("/memory: the notes are not read", "chat", place, "err", errText(b.scrub, err))
		b.answerPress(ctx, place, cqID, memoryUnreadable, true)
		return
	}
	key, answer := strings.TrimPrefix(data, memoryPrefix), memoryGone
	for _, e := range list {
		if memoryKey(e.Text) != key {
			continue
		}
		ok, err := b.sessions.ForgetMemory(place, e.Text)
		if err != nil {
			b.log.Error("/memory: a note is not deleted", "chat", place, "err", errText(b.scrub, err))
			b.answerPress(ctx, place, cqID, memoryUnchanged, true)
			return
		}
		if ok {
			answer = "Deleted: " + truncate(b.scrub(e.Text), 60)
			b.log.Info("/memory: a note deleted", "chat", place, "user", user)
		}
		break
	}
	b.answerPress(ctx, place, cqID, answer, false)
	if list, err = b.sessions.Memory(place); err != nil || msgID == 0 {
		return
	}
	text, kb := memoryMessage(list, b.scrub)
	b.editList(ctx, place, msgID, "/memory", text, kb)
}
