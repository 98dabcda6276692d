package bot

import (
	"context"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// cmdNew is /new: the session archives the conversation and stops the
// chat's MCP processes.
func (b *Bot) cmdNew(ctx context.Context, place chat.Place) {
	if err := b.sessions.Reset(ctx, place); err != nil {
		b.log.Error("/new failed", "chat", place, "err", errText(b.scrub, err))
		b.reply(ctx, place, "Sorry, I could not start a new conversation. The operator has the details in the log.")
		return
	}
	b.reply(ctx, place, "New conversation started.")
}
