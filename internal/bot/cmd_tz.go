package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// cmdTz is /tz (the chat's time zone) and /tz <Area/City> (set it): the
// zone new scheduled tasks are read in and their times told in. Anyone
// the bot allows in the chat may set it.
func (b *Bot) cmdTz(ctx context.Context, place chat.Place, args []string) {
	if len(args) == 0 {
		zone, err := b.sessions.Zone(place)
		if err != nil {
			b.log.Warn("/tz: the chat's zone is not read", "chat", place, "err", errText(b.scrub, err))
		}
		b.reply(ctx, place, fmt.Sprintf("This chat's time zone: %s. /tz <Area/City> (such as /tz Europe/Berlin) changes it.", zone))
		return
	}
	if len(args) > 1 {
		b.reply(ctx, place, "Give one zone name, such as /tz Europe/Berlin.")
		return
	}
	if err := b.sessions.SetZone(place, args[0]); err != nil {
		if msg, ok := chat.UserMessage(err); ok {
			b.reply(ctx, place, msg)
			return
		}
		b.log.Error("/tz: the chat's zone is not saved", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, "Sorry, I could not save the time zone. The operator has the details in the log.")
		return
	}
	b.reply(ctx, place, fmt.Sprintf("This chat's time zone is now %s. New scheduled tasks follow it (daylight saving too); "+
		"tasks scheduled before keep the zone they were made in.", strings.TrimSpace(args[0])))
}
