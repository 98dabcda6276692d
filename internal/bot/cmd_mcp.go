package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// cmdMCP is /mcp (every server's state), /mcp <name> (one server, in a
// <pre> block) and /mcp restart <name>. A name is the rest of the
// command: a server named in another client's spelling may hold spaces
// ("my server"); the session takes that name or the server's internal
// one. The session says where the servers stand; the texts are written
// here (mcp_text.go) and redacted whole, before /mcp <name> is capped.
func (b *Bot) cmdMCP(ctx context.Context, place chat.Place, userID int64, args []string) {
	switch {
	case len(args) > 0 && strings.EqualFold(args[0], "login"):
		if len(args) < 2 {
			b.reply(ctx, place, "Usage: /mcp login <name>. Send /mcp to see the servers.")
			return
		}
		b.cmdLogin(ctx, place, userID, strings.Join(args[1:], " "))
	case len(args) == 0:
		st, err := b.sessions.MCPStatus(ctx, place)
		if err != nil {
			b.mcpFailed(ctx, place, err)
			return
		}
		b.reply(ctx, place, b.scrub(mcpStatusText(st)))
	case strings.EqualFold(args[0], "restart"):
		if len(args) < 2 {
			b.reply(ctx, place, "Usage: /mcp restart <name>. Send /mcp to see the servers.")
			return
		}
		name := strings.Join(args[1:], " ")
		if err := b.sessions.MCPRestart(place, name); err != nil {
			b.mcpFailed(ctx, place, err)
			return
		}
		b.reply(ctx, place, b.scrub(name)+" restarted: the next call starts a fresh process.")
	default:
		st, err := b.sessions.MCPServer(ctx, place, strings.Join(args, " "))
		if err != nil {
			b.mcpFailed(ctx, place, err)
			return
		}
		_ = b.chat.sendPre(ctx, place, mcpServerReply(st, b.scrub))
	}
}

// mcpFailed answers with the error's text: a server the chat has not
// got (chat.UnknownServerError) in words; the session's other /mcp errors
// are written for the user.
func (b *Bot) mcpFailed(ctx context.Context, place chat.Place, err error) {
	msg := errText(b.scrub, err)
	if unknown := (*chat.UnknownServerError)(nil); errors.As(err, &unknown) {
		msg = b.scrub(unknownServerText(unknown))
	}
	b.log.Info("/mcp failed", "chat", place, "err", msg)
	if ctx.Err() != nil {
		msg = "that took too long; try again in a moment"
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), replyTimeout)
		defer cancel()
	}
	b.reply(ctx, place, "Sorry: "+msg)
}
