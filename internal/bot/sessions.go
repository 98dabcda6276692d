package bot

import (
	"context"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// Sessions is what the bot needs from the session manager
// (*session.Manager satisfies it). Deliver must not block on a turn; the
// bot calls every method from the chat's own worker, so calls for one chat
// come in the order the updates arrived.
type Sessions interface {
	// Deliver queues a user's message for chat, with the files sent with
	// it. msg.Taken is called once the session no longer needs the bot to
	// keep the message (see session.Message): until then it stays in the
	// inbox, to be delivered again after a restart.
	Deliver(place chat.Place, msg session.Message) error
	// Stop cancels chat's running turn and reports whether one was running
	// (the session then says "Stopped.").
	Stop(place chat.Place) bool
	// End ends chat's session for now (a forum topic deleted or closed):
	// its turn cancelled, its servers stopped, its files kept. It does not
	// wait, and reports whether there was a session to end.
	End(place chat.Place) bool
	// Reset starts a new conversation in chat and returns when done.
	Reset(ctx context.Context, place chat.Place) error
	// MCPStatus is what /mcp tells: every server's state in chat, not
	// redacted.
	MCPStatus(ctx context.Context, place chat.Place) (chat.MCPStatus, error)
	// MCPServer is what /mcp <name> tells, not redacted; its error is
	// written for the user ("no MCP server named …").
	MCPServer(ctx context.Context, place chat.Place, name string) (chat.ServerStatus, error)
	// MCPRestart is /mcp restart <name>.
	MCPRestart(place chat.Place, name string) error
	// MCPLogin starts /mcp login <name>: an OAuth login to a server at a
	// URL.
	MCPLogin(ctx context.Context, name, redirect string) (*session.MCPLogin, error)
	// Grants lists chat's "Always in this chat" approvals (/approvals).
	Grants(place chat.Place) ([]session.Grant, error)
	// RevokeGrant takes back chat's approval of server's tool and reports
	// whether there was one.
	RevokeGrant(place chat.Place, server, tool string) (bool, error)
	// RevokeGrants takes back every approval of chat and reports how many
	// there were.
	RevokeGrants(place chat.Place) (int, error)
	// Model is chat's model and the models it may pick (/model).
	Model(place chat.Place) (session.ModelChoice, error)
	// SetModel makes name chat's model, kept across restarts, and
	// returns the chat's model as it is now: an
	// *session.UnknownModelError when name is not offered.
	SetModel(place chat.Place, name string) (session.ModelChoice, error)
	// Memory lists chat's notes (/memory), in the order they were kept.
	Memory(place chat.Place) ([]session.MemoryEntry, error)
	// ForgetMemory deletes chat's note whose text is text and reports
	// whether there was one.
	ForgetMemory(place chat.Place, text string) (bool, error)
	// ClearMemory deletes every note of chat and reports how many there
	// were (-1: the memory could not be read, and is empty all the same).
	ClearMemory(place chat.Place) (int, error)
	// ServerNames lists the enabled MCP servers, for /help.
	ServerNames() []string
	// Voice reports whether chat's answers are also read aloud (/voice);
	// SetVoice turns it on or off, kept across restarts and /new.
	Voice(place chat.Place) (bool, error)
	SetVoice(place chat.Place, on bool) error
	// Zone is chat's time zone (/tz): its own, TZ's, or UTC; SetZone
	// sets it, kept across restarts (an error with a user message when
	// no zone has that name).
	Zone(place chat.Place) (string, error)
	SetZone(place chat.Place, name string) error
}
