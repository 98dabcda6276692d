package bot

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/session"
)

// loginWait is how long /mcp login waits for the admin's pasted address.
const loginWait = 10 * time.Minute

// logins are the /mcp logins waiting for their admin's next message, by
// chat: one per chat, the latest.
type logins struct {
	mu      sync.Mutex
	pending map[int64]pendingLogin
}

type pendingLogin struct {
	user  int64
	name  string
	login *session.MCPLogin
	until time.Time
}

func (l *logins) put(chatID int64, p pendingLogin) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[int64]pendingLogin{}
	}
	l.pending[chatID] = p
}

// take returns and forgets the chat's login if userID started it and it
// has not expired.
func (l *logins) take(chatID, userID int64, now time.Time) (pendingLogin, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pending[chatID]
	if !ok || p.user != userID {
		return pendingLogin{}, false
	}
	delete(l.pending, chatID)
	return p, now.Before(p.until)
}

// cmdLogin is /mcp login <name>, for admins: the authorization link goes
// to the chat, and the admin's next message there — the address the
// browser ended on, or the code — finishes the login (it never reaches
// the model).
func (b *Bot) cmdLogin(ctx context.Context, chatID, userID int64, name string) {
	if !b.access.isAdmin(userID) {
		b.reply(ctx, chatID, "Only the bot's admins (TELEGRAM_ADMINS) may log in to a server.")
		return
	}
	login, err := b.sessions.MCPLogin(ctx, name)
	if err != nil {
		b.mcpFailed(ctx, chatID, err)
		return
	}
	b.logins.put(chatID, pendingLogin{user: userID, name: name, login: login, until: time.Now().Add(loginWait)})
	b.log.Info("MCP login started", "chat", chatID, "user", userID, "server", name)
	b.reply(ctx, chatID, "To log in to "+b.scrub(name)+", open this link and log in:\n\n"+login.URL+
		"\n\nThe browser then goes to "+session.LoginRedirect+"…, which will not load: copy that whole address (or the code the page shows) "+
		"and send it here as your next message, within 10 minutes. It does not reach the model.")
}

// finishLogin takes text as the answer to a login the user started in
// the chat, if one waits; it reports whether it did.
func (b *Bot) finishLogin(ctx context.Context, chatID, userID int64, text string) bool {
	p, ok := b.logins.take(chatID, userID, time.Now())
	if p.login == nil {
		return false
	}
	if !ok {
		b.reply(ctx, chatID, "The login to "+b.scrub(p.name)+" expired: send /mcp login "+b.scrub(p.name)+" again.")
		return true
	}
	if err := p.login.Finish(ctx, strings.TrimSpace(text)); err != nil {
		msg := errText(b.scrub, err)
		b.log.Info("MCP login failed", "chat", chatID, "server", p.name, "err", msg)
		b.reply(ctx, chatID, "The login failed: "+msg+"\nSend /mcp login "+b.scrub(p.name)+" to try again.")
		return true
	}
	b.log.Info("MCP login finished", "chat", chatID, "server", p.name)
	b.reply(ctx, chatID, b.scrub(p.name)+": logged in. Its tools are offered from the next message on.")
	return true
}
