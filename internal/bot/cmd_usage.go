package bot

import (
	"context"
	"fmt"
	"strconv"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Usage is the record of what the model cost (*spend.Ledger), for /usage
// and /allow_more. It is kept per chat: the topics of a forum spend one
// allowance.
type Usage interface {
	// Report is /usage in chat, asked by user; an admin's has every
	// chat's usage too.
	Report(chatID, userID int64, admin bool) string
	// AllowMore lifts chat's daily allowance for the rest of the UTC day.
	AllowMore(chatID, by int64)
}

// DiskUsage is what /usage says of a chat's disk: its generated files
// against its budget, and what is not counted (*session.Manager satisfies
// it). Sessions that do not implement it show no disk part.
type DiskUsage interface {
	DiskUsage(ctx context.Context, place chat.Place) (string, error)
}

// cmdUsage is /usage: the chat's tokens today and this month, per model,
// with their cost (the whole chat's, every topic's together), every
// chat's for an admin, and the disk of the place it was sent in (a topic
// has a workspace of its own).
func (b *Bot) cmdUsage(ctx context.Context, place chat.Place, userID int64, admin bool) {
	text := "Usage is not recorded."
	if b.o.Usage != nil {
		text = b.o.Usage.Report(place.Chat, userID, admin)
	}
	if d, ok := b.sessions.(DiskUsage); ok {
		if du, err := d.DiskUsage(ctx, place); err != nil {
			b.log.Warn("/usage: the chat's disk use", "chat", place, "err", err)
		} else {
			text += "\n\n" + du
		}
	}
	b.reply(ctx, place, text)
}

// allowMoreHelp is the reply to /allow_more with a bad argument.
const allowMoreHelp = "Use /allow_more <chat id> (or /allow_more alone, for this chat): it lifts that chat's daily allowance for the rest of today (UTC)."

// cmdAllowMore is an admin's /allow_more [chat id]: the chat's daily
// allowance is lifted for the rest of the UTC day.
func (b *Bot) cmdAllowMore(ctx context.Context, place chat.Place, userID int64, args []string) {
	switch {
	case !b.access.isAdmin(userID):
		b.reply(ctx, place, "Only an admin of this bot (TELEGRAM_ADMINS) can lift the daily allowance.")
		return
	case b.o.Usage == nil:
		b.reply(ctx, place, "Usage is not recorded, so there is no allowance to lift.")
		return
	case len(args) > 1:
		b.reply(ctx, place, allowMoreHelp)
		return
	}
	target := place.Chat // the allowance is the chat's, every topic's
	if len(args) == 1 {
		id, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil || id == 0 {
			b.reply(ctx, place, allowMoreHelp)
			return
		}
		target = id
	}
	b.o.Usage.AllowMore(target, userID)
	what := fmt.Sprintf("chat %d", target)
	if target == place.Chat {
		what = "this chat"
	}
	b.reply(ctx, place, "The daily allowance of "+what+" is lifted for the rest of today (UTC).")
}
