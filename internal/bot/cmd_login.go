package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// loginWait is how long /mcp login waits for the admin's pasted address.
const loginWait = 10 * time.Minute

// logins are the /mcp logins waiting for their admin's next message, by
// chat: one per chat, the latest.
type logins struct {
	mu      sync.Mutex
	pending map[chat.Place]pendingLogin
}

type pendingLogin struct {
	user  int64
	name  string
	login *session.MCPLogin
	until time.Time
}

func (l *logins) put(place chat.Place, p pendingLogin) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[chat.Place]pendingLogin{}
	}
	l.pending[place] = p
}

// take returns and forgets the chat's login if userID started it and it
// has not expired.
func (l *logins) take(place chat.Place, userID int64, now time.Time) (pendingLogin, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pending[place]
	if !ok || p.user != userID {
		return pendingLogin{}, false
	}
	delete(l.pending, place)
	return p, now.Before(p.until)
}

// cmdLogin is /mcp login <name>, for admins: the authorization link goes
// to the chat, and the admin's next message there — the address the
// browser ended on, or the code — finishes the login (it never reaches
// the model).
func (b *Bot) cmdLogin(ctx context.Context, place chat.Place, userID int64, name string) {
	if !b.access.isAdmin(userID) {
		b.reply(ctx, place, "Only the bot's admins (TELEGRAM_ADMINS) may log in to a server.")
		return
	}
	login, err := b.sessions.MCPLogin(ctx, name, b.o.LoginCallback)
	if err != nil {
		b.mcpFailed(ctx, place, err)
		return
	}
	b.logins.put(place, pendingLogin{user: userID, name: name, login: login, until: time.Now().Add(loginWait)})
	b.log.Info("MCP login started", "chat", place, "user", userID, "server", name)
	if b.o.LoginCallback != "" {
		b.reply(ctx, place, "To log in to "+b.scrub(name)+", open this link and log in, within "+session.DurationText(loginWait)+":\n\n"+login.URL+
			"\n\nThe browser then comes back to me, and I say here when it is done. (If that page does not load, send me its "+
			"address as your next message instead; it does not reach the model.)")
		return
	}
	b.reply(ctx, place, "To log in to "+b.scrub(name)+", open this link and log in:\n\n"+login.URL+
		"\n\nThe browser then goes to "+session.LoginRedirect+"…, which will not load: copy that whole address (or the code the page shows) "+
		"and send it here as your next message, within "+session.DurationText(loginWait)+". It does not reach the model.")
}

// takeByState returns and forgets the login whose redirect carries state,
// with its chat, if it has not expired.
func (l *logins) takeByState(state string, now time.Time) (chat.Place, pendingLogin, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for place, p := range l.pending {
		if state != "" && p.login.State == state {
			delete(l.pending, place)
			return place, p, now.Before(p.until)
		}
	}
	return chat.Place{}, pendingLogin{}, false
}

// LoginCallbackPath is the path of LoginCallbackHandler on HTTP_ADDR
// ("" without a LoginCallback).
func (b *Bot) LoginCallbackPath() string {
	if b.o.LoginCallback == "" {
		return ""
	}
	u, err := url.Parse(b.o.LoginCallback)
	if err != nil {
		return ""
	}
	return u.Path
}

// LoginCallbackHandler is where the authorization server sends the
// admin's browser back after /mcp login: the login it carries the state of
// is finished, and its chat told.
func (b *Bot) LoginCallbackHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		place, p, ok := b.logins.takeByState(r.URL.Query().Get("state"), time.Now())
		if p.login == nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintln(w, "volcanicbot: no login waits for this answer (it expired, or was finished). Send /mcp login <name> again.")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), replyTimeout)
		defer cancel()
		if !ok {
			fmt.Fprintln(w, "volcanicbot: this login expired. Send /mcp login "+p.name+" again.")
			b.reply(ctx, place, "The login to "+b.scrub(p.name)+" expired: send /mcp login "+b.scrub(p.name)+" again.")
			return
		}
		back := strings.TrimSuffix(b.o.LoginCallback, b.LoginCallbackPath()) + r.URL.RequestURI()
		if err := p.login.Finish(ctx, back); err != nil {
			msg := b.loginFailed(ctx, place, p.name, err)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintln(w, "volcanicbot: "+msg)
			return
		}
		b.log.Info("MCP login finished", "chat", place, "server", p.name)
		fmt.Fprintln(w, "volcanicbot: logged in to "+p.name+". You can close this page.")
		b.reply(ctx, place, b.scrub(p.name)+": logged in. Its tools are offered from the next message on.")
	})
}

// finishLogin takes text as the answer to a login the user started in
// the chat, if one waits; it reports whether it did.
func (b *Bot) finishLogin(ctx context.Context, place chat.Place, userID int64, text string) bool {
	p, ok := b.logins.take(place, userID, time.Now())
	if p.login == nil {
		return false
	}
	if !ok {
		b.reply(ctx, place, "The login to "+b.scrub(p.name)+" expired: send /mcp login "+b.scrub(p.name)+" again.")
		return true
	}
	if err := p.login.Finish(ctx, strings.TrimSpace(text)); err != nil {
		b.loginFailed(ctx, place, p.name, err)
		return true
	}
	b.log.Info("MCP login finished", "chat", place, "server", p.name)
	b.reply(ctx, place, b.scrub(p.name)+": logged in. Its tools are offered from the next message on.")
	return true
}

// loginFailed tells the chat that the login to name failed, on one line:
// the reason (the error's chat.UserMessage, or the error) and what to do;
// it returns that line.
func (b *Bot) loginFailed(ctx context.Context, place chat.Place, name string, err error) string {
	name = b.scrub(name)
	reason := errText(b.scrub, err)
	if msg, ok := chat.UserMessage(err); ok {
		reason = b.scrub(msg)
	}
	reason = strings.TrimSuffix(oneLine(reason), ".")
	b.log.Info("MCP login failed", "chat", place, "server", name, "err", reason)
	msg := "The login to " + name + " failed: " + reason + ". Send /mcp login " + name + " to try again."
	b.reply(ctx, place, msg)
	return msg
}
