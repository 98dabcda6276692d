package bot

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// The data of /approvals' buttons: "rv:<key>" takes back the grant whose
// grantKey it is, "rv:*" every grant of the chat. A press is settled
// against the chat's grants as they are when it comes, so the buttons keep
// no state and work after a restart; data made up by a client can do no
// more than the presser may anyway with /approvals — take back one of that
// chat's grants —, never approve anything.
const (
	revokePrefix = "rv:"
	revokeAll    = revokePrefix + "*"
)

// maxListed is how many grants /approvals names, each with its button;
// Revoke all takes the others too.
const maxListed = 20

// Texts of /approvals.
const (
	noGrants = "Nothing is approved always in this chat: a tool that asks first asks at every call. " +
		"(\"Always in this chat\" under an approval question adds the tool here.)"
	grantsUnreadable = "Sorry, I could not read this chat's approvals. The operator has the details in the log."
	grantsUnchanged  = "Sorry, I could not change this chat's approvals. The operator has the details in the log."
	grantGone        = "That one was revoked already."
)

// cmdApprovals is /approvals: the chat's standing "Always in this chat"
// approvals, each with a button that takes it back (its next call asks
// again), and Revoke all. Anyone the bot allows may use it and press them,
// as /mcp restart: taking an approval back only makes the bot ask more.
func (b *Bot) cmdApprovals(ctx context.Context, place chat.Place) {
	list, err := b.sessions.Grants(place)
	if err != nil {
		b.log.Error("/approvals: the grants are not read", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, grantsUnreadable)
		return
	}
	text, kb := grantsMessage(list)
	text = b.scrub(text)
	if _, err := telegram.Send(ctx, b.tg, place.Chat, "sendMessage", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return b.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{ChatID: place.Chat, MessageThreadID: place.Topic, Text: text, LinkPreviewOptions: noPreview, ReplyMarkup: kb})
	}); err != nil {
		b.log.Error("message not delivered", "chat", place, "err", err.Error())
	}
}

// grantsMessage is the /approvals text (plain) and its keyboard (nil
// without grants).
func grantsMessage(list []session.Grant) (string, models.ReplyMarkup) {
	if len(list) == 0 {
		return noGrants, nil
	}
	var s strings.Builder
	s.WriteString("Approved always in this chat (their calls run without asking):\n")
	kb := &models.InlineKeyboardMarkup{}
	for i, g := range list {
		if i == maxListed {
			fmt.Fprintf(&s, "…and %d more: Revoke all takes them too.\n", len(list)-maxListed)
			break
		}
		fmt.Fprintf(&s, "%d. %s: %s — by user %d, %s\n", i+1, g.Server, g.Tool, g.By, g.At.UTC().Format("2 Jan 2006"))
		kb.InlineKeyboard = append(kb.InlineKeyboard, []models.InlineKeyboardButton{
			{Text: truncate(fmt.Sprintf("Revoke %d. %s: %s", i+1, g.Server, g.Tool), 60), CallbackData: revokePrefix + grantKey(g)},
		})
	}
	s.WriteString("Press one to take it back: its next call asks again.")
	if len(list) > 1 {
		kb.InlineKeyboard = append(kb.InlineKeyboard, []models.InlineKeyboardButton{{Text: "Revoke all", CallbackData: revokeAll}})
	}
	return s.String(), kb
}

// grantKey names a grant in a button's data: the buttonKey of its server
// and tool.
func grantKey(g session.Grant) string { return buttonKey(g.Server + "\x00" + g.Tool) }

// buttonKey names what a list's button acts on in its data (Telegram takes
// 64 bytes, names may be longer): 96 bits of the hash of name.
func buttonKey(name string) string {
	h := sha256.Sum256([]byte(name))
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

// listPress settles a press of a list's button (/approvals, /model,
// /memory) on the chat's worker: the press cqID by user on message msgID,
// with its data.
type listPress func(ctx context.Context, place chat.Place, msgID int, cqID string, user int64, data string)

// onListPress settles a press of a list's button, from the poller: a
// stranger is refused at once; anyone else's press is a job of the chat's
// worker (in order with the chat's commands), which answers it.
func (b *Bot) onListPress(cq *models.CallbackQuery, settle listPress) {
	place, msgID := pressedIn(cq)
	if !b.access.allows(cq.From.ID) {
		b.answerPress(b.disp.ctx, place, cq.ID, strangerPress, true)
		return
	}
	id, user, data := cq.ID, cq.From.ID, cq.Data
	if !b.disp.submit(place, func(ctx context.Context) { settle(ctx, place, msgID, id, user, data) }) {
		b.answerPress(b.disp.ctx, place, id, busyPress, false)
	}
}

// revokePressed takes back what the button pressed on message msgID
// names, answers the press with what was done, and edits the message to
// the chat's grants as they are now.
func (b *Bot) revokePressed(ctx context.Context, place chat.Place, msgID int, cqID string, user int64, data string) {
	list, err := b.sessions.Grants(place)
	if err != nil {
		b.log.Error("/approvals: the grants are not read", "chat", place, "err", errText(b.scrub, err))
		b.answerPress(ctx, place, cqID, grantsUnreadable, true)
		return
	}
	var answer string
	if data == revokeAll {
		n, err := b.sessions.RevokeGrants(place)
		if err != nil {
			b.log.Error("/approvals: the grants are not revoked", "chat", place, "err", errText(b.scrub, err))
			b.answerPress(ctx, place, cqID, grantsUnchanged, true)
			return
		}
		answer = fmt.Sprintf("Revoked %s: their calls ask again.", plural(n, "approval"))
		if n == 0 {
			answer = grantGone
		}
		b.log.Info("/approvals: all revoked", "chat", place, "user", user, "grants", n)
	} else {
		key := strings.TrimPrefix(data, revokePrefix)
		answer = grantGone
		for _, g := range list {
			if grantKey(g) != key {
				continue
			}
			ok, err := b.sessions.RevokeGrant(place, g.Server, g.Tool)
			if err != nil {
				b.log.Error("/approvals: a grant is not revoked", "chat", place, "err", errText(b.scrub, err))
				b.answerPress(ctx, place, cqID, grantsUnchanged, true)
				return
			}
			if ok {
				answer = "Revoked " + g.Server + ": " + g.Tool + ". Its next call asks again."
				b.log.Info("/approvals: revoked", "chat", place, "user", user, "server", g.Server, "tool", g.Tool)
			}
			break
		}
	}
	b.answerPress(ctx, place, cqID, b.scrub(answer), false)
	if list, err = b.sessions.Grants(place); err != nil || msgID == 0 {
		return
	}
	text, kb := grantsMessage(list)
	text = b.scrub(text)
	b.editList(ctx, place, msgID, "/approvals", text, kb)
}

// answerPress answers a button press (answerCallbackQuery), queued on the
// chat's sender without waiting.
func (b *Bot) answerPress(ctx context.Context, place chat.Place, id, text string, alert bool) {
	b.tg.Submit(ctx, place.Chat, "answerCallbackQuery", telegram.Unpaced, "", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, b.chat.doneTimeout)
		defer cancel()
		_, err := b.tg.API().AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text, ShowAlert: alert})
		return err
	})
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
