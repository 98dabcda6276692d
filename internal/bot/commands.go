package bot

import (
	"context"
	"time"
)

// commandTimeout bounds a command's work (/new waits for the session,
// /mcp may start servers to list their tools).
const commandTimeout = 2 * time.Minute

// command runs a command from an allowed user on the chat's worker. No
// command calls the model.
func (b *Bot) command(ctx context.Context, chatID, from int64, group bool, cmd command) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	switch cmd.Name {
	case "start", "help":
		b.cmdHelp(ctx, chatID, group, b.o.Pairing != nil && b.access.isAdmin(from))
	case "new":
		b.cmdNew(ctx, chatID)
	case "stop":
		b.cmdStop(ctx, chatID)
	case "mcp":
		b.cmdMCP(ctx, chatID, from, cmd.Args)
	case "allow":
		b.cmdAllow(ctx, chatID, from, cmd.Args)
	case "revoke":
		b.cmdRevoke(ctx, chatID, from, cmd.Args)
	case "users":
		b.cmdUsers(ctx, chatID, from)
	case "usage":
		b.cmdUsage(ctx, chatID, from, b.access.isAdmin(from))
	case "approvals":
		b.cmdApprovals(ctx, chatID)
	case "model":
		b.cmdModel(ctx, chatID, from, cmd.Args)
	case "memory":
		b.cmdMemory(ctx, chatID, from, cmd.Args)
	case "voice":
		b.cmdVoice(ctx, chatID, cmd.Args)
	case "allow_more":
		b.cmdAllowMore(ctx, chatID, from, cmd.Args)
	default:
		b.reply(ctx, chatID, "Unknown command /"+cmd.Name+". Send /help to see what I can do.")
	}
}

// reply sends a plain-text reply; a failure is logged by the Chat.
func (b *Bot) reply(ctx context.Context, chatID int64, text string) {
	_ = b.chat.sendPlain(ctx, chatID, text)
}
