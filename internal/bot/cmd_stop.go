package bot

import (
	"context"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// cmdStop is /stop: the session says "Stopped." when a turn was running.
func (b *Bot) cmdStop(ctx context.Context, place chat.Place) {
	if !b.sessions.Stop(place) {
		b.reply(ctx, place, "Nothing is running.")
	}
}
