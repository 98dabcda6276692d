package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// The data of /model's buttons: "md:<name>" picks the model of that name,
// "md:#<key>" the one whose modelKey it is when the name is too long for
// Telegram's 64 bytes. A press is settled against the models offered when
// it comes, so the buttons keep no state and work after a restart; data
// made up by a client can do no more than /model <name> — pick one of the
// models offered, for the chat it was pressed in.
const (
	modelPrefix    = "md:"
	modelKeyPrefix = modelPrefix + "#"
)

// Texts of /model.
const (
	modelUnreadable = "Sorry, I could not read this chat's model. The operator has the details in the log."
	modelUnchanged  = "Sorry, I could not change this chat's model. The operator has the details in the log."
	modelGone       = "That model is no longer offered. Send /model to see the ones that are."
)

// cmdModel is /model: the models this chat may pick, as buttons with its
// own marked, or /model <name>: that one picked. Anyone the bot allows
// may use it and press the buttons, in a group too, as /approvals: the
// operator chose every model offered (LLM_MODELS), and the allowances
// bound what any costs.
func (b *Bot) cmdModel(ctx context.Context, place chat.Place, userID int64, args []string) {
	if len(args) > 0 {
		name := strings.Join(args, " ")
		text, err := b.pickModel(place, userID, name)
		if err != nil {
			text = b.modelError(place, err)
		}
		b.reply(ctx, place, b.scrub(text))
		return
	}
	c, err := b.sessions.Model(place)
	if err != nil {
		b.log.Error("/model: the chat's model is not read", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, modelUnreadable)
		return
	}
	text, kb := modelMessage(c)
	text = b.scrub(text)
	if _, err := telegram.Send(ctx, b.tg, place.Chat, "sendMessage", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return b.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: place.Chat, MessageThreadID: place.Topic, Text: text, LinkPreviewOptions: noPreview, ReplyMarkup: kb})
	}); err != nil {
		b.log.Error("message not delivered", "chat", place, "err", err.Error())
	}
}

// pickModel makes name chat's model and says so.
func (b *Bot) pickModel(place chat.Place, userID int64, name string) (string, error) {
	c, err := b.sessions.SetModel(place, name)
	if err != nil {
		return "", err
	}
	b.log.Info("/model: picked", "chat", place, "user", userID, "model", c.Current)
	return "This chat's model is now " + modelName(c, c.Current) + ". It answers from your next message on.", nil
}

// modelError is what the chat is told of a pick that failed: the models
// offered, for a name that is not one of them.
func (b *Bot) modelError(place chat.Place, err error) string {
	var unknown *session.UnknownModelError
	if errors.As(err, &unknown) {
		return fmt.Sprintf("There is no model %q here. The models offered: %s.", truncate(unknown.Name, 100), strings.Join(unknown.Models, ", "))
	}
	b.log.Error("/model: the chat's model is not changed", "chat", place, "err", errText(b.scrub, err))
	return modelUnchanged
}

// modelName is name, "(the default)" after it when it is the first of
// c's models.
func modelName(c session.ModelChoice, name string) string {
	if len(c.Models) > 0 && c.Models[0] == name {
		return name + " (the default)"
	}
	return name
}

// modelMessage is the /model text (plain) and its keyboard: a button a
// model, the chat's own marked (none when only one is offered).
func modelMessage(c session.ModelChoice) (string, models.ReplyMarkup) {
	if c.Current == "" {
		return "No model is named in this bot's configuration (LLM_MODEL, LLM_MODELS): there is none to pick.", nil
	}
	var s strings.Builder
	if c.Gone != "" {
		fmt.Fprintf(&s, "This chat had %s, which is no longer offered: it has the default again.\n", c.Gone)
	}
	fmt.Fprintf(&s, "This chat's model: %s.", modelName(c, c.Current))
	if len(c.Models) < 2 {
		s.WriteString(" It is the only one offered.")
		return s.String(), nil
	}
	s.WriteString("\nPress one to switch this chat to it, or send /model <name>. The models offered: " + strings.Join(c.Models, ", ") + ".")
	kb := &models.InlineKeyboardMarkup{}
	for _, m := range c.Models {
		label := m
		if m == c.Current {
			label = "✅ " + m
		}
		kb.InlineKeyboard = append(kb.InlineKeyboard, []models.InlineKeyboardButton{{Text: truncate(label, 60), CallbackData: modelData(m)}})
	}
	return s.String(), kb
}

// modelData is the button data of the model name.
func modelData(name string) string {
	if len(modelPrefix)+len(name) <= 64 && !strings.HasPrefix(name, "#") {
		return modelPrefix + name
	}
	return modelKeyPrefix + modelKey(name)
}

// modelKey names a model too long for a button's data: 96 bits of its
// hash.
func modelKey(name string) string { return buttonKey(name) }

// modelPressed picks the model the button pressed on message msgID names,
// answers the press with what was done, and edits the message to the
// chat's model as it is now.
func (b *Bot) modelPressed(ctx context.Context, place chat.Place, msgID int, cqID string, user int64, data string) {
	c, err := b.sessions.Model(place)
	if err != nil {
		b.log.Error("/model: the chat's model is not read", "chat", place, "err", errText(b.scrub, err))
		b.answerPress(ctx, place, cqID, modelUnreadable, true)
		return
	}
	name := ""
	for _, m := range c.Models {
		if modelData(m) == data {
			name = m
			break
		}
	}
	if name == "" {
		b.answerPress(ctx, place, cqID, modelGone, true)
		return
	}
	answer, err := b.pickModel(place, user, name)
	if err != nil {
		b.answerPress(ctx, place, cqID, b.scrub(truncate(b.modelError(place, err), 190)), true)
		return
	}
	b.answerPress(ctx, place, cqID, b.scrub(truncate(answer, 190)), false)
	if c, err = b.sessions.Model(place); err != nil || msgID == 0 {
		return
	}
	text, kb := modelMessage(c)
	b.editList(ctx, place, msgID, "/model", b.scrub(text), kb)
}

// editList replaces the text and buttons of the bot's message msgID, the
// list of command (for the log).
func (b *Bot) editList(ctx context.Context, place chat.Place, msgID int, command, text string, kb models.ReplyMarkup) {
	err := b.tg.Wait(ctx, "editMessageText", b.tg.Submit(ctx, place.Chat, "editMessageText", telegram.Paced, "", func(ctx context.Context) error {
		_, err := b.tg.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: place.Chat, MessageID: msgID, Text: text, LinkPreviewOptions: noPreview, ReplyMarkup: kb,
		})
		if notModified(err) { // the message was as it is now already
			return nil
		}
		return err
	}))
	if err != nil {
		b.log.Warn(command+": the list is not updated", "chat", place, "err", errText(b.scrub, err))
	}
}
