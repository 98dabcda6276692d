package main

import (
	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/spend"
)

// The MCP client is the sessions' catalogue, and each of its sessions a
// chat's MCP session (chatside.go wires them); the bot's chat is the
// sessions' chat, and sends the rest of an answer a shutdown cut off.
var (
	_ session.Catalogue    = (*mcpclient.Client)(nil)
	_ session.MCPSession   = (*mcpclient.Session)(nil)
	_ session.Chat         = (*bot.Chat)(nil)
	_ session.ResumingChat = (*bot.Chat)(nil)
	_ session.VoiceChat    = (*bot.Chat)(nil)
	_ bot.AudioUsage       = (*spend.Ledger)(nil)
)
