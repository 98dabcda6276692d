package bot

import (
	"context"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// commandTimeout bounds a command's work (/new waits for the session,
// /mcp may start servers to list their tools).
const commandTimeout = 2 * time.Minute

// command runs a command from an allowed user on the chat's worker. No
// command calls the model.
func (b *Bot) command(ctx context.Context, place chat.Place, from int64, group bool, cmd command) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	switch cmd.Name {
	case "start", "help":
		b.cmdHelp(ctx, place, group, b.o.Pairing != nil && b.access.isAdmin(from))
	case "new":
		b.cmdNew(ctx, place)
	case "stop":
		b.cmdStop(ctx, place)
	case "mcp":
		b.cmdMCP(ctx, place, from, cmd.Args)
	case "allow":
		b.cmdAllow(ctx, place, from, cmd.Args)
	case "revoke":
		b.cmdRevoke(ctx, place, from, cmd.Args)
	case "users":
		b.cmdUsers(ctx, place, from)
	case "usage":
		b.cmdUsage(ctx, place, from, b.access.isAdmin(from))
	case "approvals":
		b.cmdApprovals(ctx, place)
	case "model":
		b.cmdModel(ctx, place, from, cmd.Args)
	case "memory":
		b.cmdMemory(ctx, place, from, cmd.Args)
	case "voice":
		b.cmdVoice(ctx, place, cmd.Args)
	case "jobs":
		b.cmdJobs(ctx, place, from, cmd.Args)
	case "tz":
		b.cmdTz(ctx, place, cmd.Args)
	case "allow_more":
		b.cmdAllowMore(ctx, place, from, cmd.Args)
	default:
		b.reply(ctx, place, "Unknown command /"+cmd.Name+". Send /help to see what I can do.")
	}
}

// reply sends a plain-text reply; a failure is logged by the Chat.
func (b *Bot) reply(ctx context.Context, place chat.Place, text string) {
	_ = b.chat.sendPlain(ctx, place, text)
}
