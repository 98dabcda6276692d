package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// cmdHelp is /start and /help: what the bot does, its MCP servers and its
// commands.
// An admin sees the admin commands too.
func (b *Bot) cmdHelp(ctx context.Context, place chat.Place, group, admin bool) {
	b.reply(ctx, place, helpText(b.sessions.ServerNames(), b.me.Username, group, admin))
}

func helpText(servers []string, username string, group, admin bool) string {
	var s strings.Builder
	s.WriteString("Hi! I'm an AI assistant. Send me a message and I'll answer, using tools when they help")
	if len(servers) > 0 {
		fmt.Fprintf(&s, ". My tools come from these MCP servers: %s.", strings.Join(servers, ", "))
	} else {
		s.WriteString(". No MCP servers are configured, so I have no tools beyond sending files.")
	}
	s.WriteString(" You can send me photos and files too, and I can send you files I make, such as screenshots.\n\n")
	if group && username != "" {
		fmt.Fprintf(&s, "In a group, mention me (@%s) or reply to one of my messages.\n\n", username)
	}
	s.WriteString("Commands:\n")
	for _, c := range commandList {
		if !c.admin || admin {
			fmt.Fprintf(&s, "%s – %s\n", c.usage, c.desc)
		}
	}
	return strings.TrimRight(s.String(), "\n")
}
