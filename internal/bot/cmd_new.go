package bot

import "context"

// cmdNew is /new: the session archives the conversation and stops the
// chat's MCP processes.
func (b *Bot) cmdNew(ctx context.Context, chatID int64) {
	if err := b.sessions.Reset(ctx, chatID); err != nil {
		b.log.Error("/new failed", "chat", chatID, "err", errText(b.scrub, err))
		b.reply(ctx, chatID, "Sorry, I could not start a new conversation. The operator has the details in the log.")
		return
	}
	b.reply(ctx, chatID, "New conversation started.")
}
