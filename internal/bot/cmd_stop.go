package bot

import "context"

// cmdStop is /stop: the session says "Stopped." when a turn was running.
func (b *Bot) cmdStop(ctx context.Context, chatID int64) {
	if !b.sessions.Stop(chatID) {
		b.reply(ctx, chatID, "Nothing is running.")
	}
}
