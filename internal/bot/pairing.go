package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/pairing"
)

// Pairing: a stranger's refusal carries a one-time code, an admin adds them
// with /allow <code> (or the operator with `volcanicbot allow <code>` on
// the host), /revoke removes a user added so, /users lists who may write.

// refuse tells a stranger they are not allowed, with a code to ask for
// access when the bot keeps added users.
func (b *Bot) refuse(ctx context.Context, place chat.Place, from *models.User) {
	b.log.Info("refused a stranger", "user", from.ID, "chat", place)
	if b.o.Pairing == nil {
		b.reply(ctx, place, refusalText(from.ID))
		return
	}
	req, err := b.o.Pairing.Code(from.ID, place.Chat, fullName(from))
	switch {
	case errors.Is(err, pairing.ErrBusy):
		b.reply(ctx, place, fmt.Sprintf("Sorry, this bot is private, and too many people are waiting for access right now. "+
			"Please try again in an hour. Your Telegram user id is %d.", from.ID))
	case err != nil:
		b.log.Error("pairing: no code for a stranger", "user", from.ID, "err", errText(b.scrub, err))
		b.reply(ctx, place, refusalText(from.ID))
	default:
		b.reply(ctx, place, pairingText(req, from.ID))
	}
}

func pairingText(req pairing.Request, userID int64) string {
	return fmt.Sprintf("Sorry, this bot is private. To ask for access, give the bot's operator this code: %s "+
		"(valid for an hour). They add you with /allow %s in a chat with me. Your Telegram user id is %d.",
		req.Code, req.Code, userID)
}

// fullName is how a user shows in /users and /allow's confirmation: their
// names and @username, as they set them.
func fullName(u *models.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if u.Username != "" {
		if name != "" {
			return name + " (@" + u.Username + ")"
		}
		return "@" + u.Username
	}
	return name
}

// adminOnly answers a non-admin's admin command and reports whether from
// may go on.
func (b *Bot) adminOnly(ctx context.Context, place chat.Place, from int64, name string) bool {
	switch {
	case b.o.Pairing == nil:
		b.reply(ctx, place, "/"+name+" is not available: this bot keeps no added users.")
		return false
	case !b.access.isAdmin(from):
		if len(b.o.Admins) == 0 {
			b.reply(ctx, place, "Only an admin can use /"+name+", and none is set (TELEGRAM_ADMINS). "+
				"The operator can add users on the host: volcanicbot allow <code>.")
		} else {
			b.reply(ctx, place, "Only an admin (TELEGRAM_ADMINS) can use /"+name+".")
		}
		return false
	}
	return true
}

// cmdAllow is /allow <code>: an admin adds the stranger who got the code;
// they are told in the chat where they asked.
func (b *Bot) cmdAllow(ctx context.Context, place chat.Place, from int64, args []string) {
	if !b.adminOnly(ctx, place, from, "allow") {
		return
	}
	if len(args) != 1 {
		b.reply(ctx, place, "Usage: /allow <code> — the code a stranger got when I refused them.")
		return
	}
	user, req, err := b.o.Pairing.Allow(args[0], from)
	if err != nil {
		b.reply(ctx, place, allowError(err, req, pairing.NormalizeCode(args[0])))
		if !errors.Is(err, pairing.ErrUnknownCode) && !errors.Is(err, pairing.ErrExpired) && !errors.Is(err, pairing.ErrUsed) {
			b.log.Error("/allow", "err", errText(b.scrub, err))
		}
		return
	}
	b.log.Info("user added", "user", user.ID, "by", from)
	b.reply(ctx, place, fmt.Sprintf("Added %s. They can write to me now.", userLabel(user.ID, user.Name)))
	if req.ChatID != place.Chat {
		b.reply(ctx, chat.In(req.ChatID), "You have access now: send me a message.")
	}
}

// allowError says why a code did not add anyone.
func allowError(err error, req pairing.Request, code string) string {
	switch {
	case errors.Is(err, pairing.ErrUnknownCode):
		return fmt.Sprintf("No such code: %q. Codes are %d characters, like K7QM2XPA; a code is kept a day after it ended.", code, pairing.CodeLen)
	case errors.Is(err, pairing.ErrExpired):
		return fmt.Sprintf("That code expired at %s: ask them to write to me again for a new one.", utc(req.Expires))
	case errors.Is(err, pairing.ErrUsed):
		by := "the host (volcanicbot allow)"
		if req.UsedBy != 0 {
			by = "admin " + strconv.FormatInt(req.UsedBy, 10)
		}
		when := ""
		if req.Used != nil {
			when = " at " + utc(*req.Used)
		}
		return fmt.Sprintf("That code was used already, by %s%s.", by, when)
	}
	return "Sorry, I could not add them. The operator has the details in the log."
}

// cmdRevoke is /revoke <user id>: a user an admin added may no longer
// write. Those of TELEGRAM_ALLOWED_USERS stay (the operator's list).
func (b *Bot) cmdRevoke(ctx context.Context, place chat.Place, from int64, args []string) {
	if !b.adminOnly(ctx, place, from, "revoke") {
		return
	}
	var id int64
	var err error
	if len(args) == 1 {
		id, err = strconv.ParseInt(args[0], 10, 64)
	}
	if len(args) != 1 || err != nil {
		b.reply(ctx, place, "Usage: /revoke <user id> — the id /users shows.")
		return
	}
	found, err := b.o.Pairing.Revoke(id)
	switch {
	case err != nil:
		b.log.Error("/revoke", "err", errText(b.scrub, err))
		b.reply(ctx, place, "Sorry, I could not remove them. The operator has the details in the log.")
	case found:
		b.log.Info("user revoked", "user", id, "by", from)
		msg := fmt.Sprintf("Removed %d: their next message is refused.", id)
		if b.access.listed(id) {
			msg = fmt.Sprintf("Removed %d from the users added; they stay allowed by TELEGRAM_ALLOWED_USERS or TELEGRAM_ADMINS.", id)
		}
		b.reply(ctx, place, msg)
	case b.access.listed(id):
		b.reply(ctx, place, fmt.Sprintf("%d is allowed by TELEGRAM_ALLOWED_USERS or TELEGRAM_ADMINS: the operator removes them there (and restarts me).", id))
	default:
		b.reply(ctx, place, fmt.Sprintf("%d was not added: nothing to remove.", id))
	}
}

// cmdUsers is /users: who may write, and who added whom, when.
func (b *Bot) cmdUsers(ctx context.Context, place chat.Place, from int64) {
	if !b.adminOnly(ctx, place, from, "users") {
		return
	}
	users, err := b.o.Pairing.Users()
	if err != nil {
		b.log.Error("/users", "err", errText(b.scrub, err))
		b.reply(ctx, place, "Sorry, I could not read the users added. The operator has the details in the log.")
		return
	}
	b.reply(ctx, place, usersText(b.o.AllowedUsers, b.o.Admins, users))
}

func usersText(listed, admins []int64, added []pairing.User) string {
	var s strings.Builder
	ids := func(xs []int64) string {
		if len(xs) == 0 {
			return "none"
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = strconv.FormatInt(x, 10)
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(&s, "Admins (TELEGRAM_ADMINS): %s\nAllowed (TELEGRAM_ALLOWED_USERS): %s\n", ids(admins), ids(listed))
	if len(added) == 0 {
		s.WriteString("Added: nobody yet. A stranger I refuse gets a code; /allow <code> adds them.")
		return s.String()
	}
	fmt.Fprintf(&s, "Added (%d):\n", len(added))
	for _, u := range added {
		by := "on the host"
		if u.AddedBy != 0 {
			by = "by " + strconv.FormatInt(u.AddedBy, 10)
		}
		fmt.Fprintf(&s, "• %s — %s, %s\n", userLabel(u.ID, u.Name), by, utc(u.AddedAt))
	}
	s.WriteString("/revoke <user id> removes one.")
	return s.String()
}

func userLabel(id int64, name string) string {
	if name == "" {
		return strconv.FormatInt(id, 10)
	}
	return fmt.Sprintf("%s (id %d)", name, id)
}

func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
