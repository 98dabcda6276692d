package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/oauth"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// NeedsLoginError is a server at a URL that wants an OAuth login (it
// answered 401), or a login with more scopes (a 403 insufficient_scope:
// StepUp).
type NeedsLoginError struct {
	Server string
	StepUp bool
	Scope  string // the scopes the server asked for, when it said
	// Reason is why a server that was logged in needs a login again (a
	// refresh the authorization server refused, a token the server
	// refused), on one line; "" for one never logged in.
	Reason string
}

func (e *NeedsLoginError) Error() string {
	var msg string
	if e.StepUp {
		msg = fmt.Sprintf("%s needs a login with more permissions (scope %q): an admin sends /mcp login %s again", e.Server, e.Scope, e.Server)
	} else {
		msg = fmt.Sprintf("%s needs login (OAuth): an admin sends /mcp login %s, or runs `volcanicbot login %s` on the bot's host", e.Server, e.Server, e.Server)
	}
	if e.Reason != "" {
		msg += "; " + e.Reason
	}
	return msg
}

// authStore keeps each url server's OAuth state: in dir (a file per
// server, 0600; the tokens never leave it but in the Authorization
// header), or in memory when dir is empty; and the last challenge each
// server answered with.
type authStore struct {
	dir string

	mu         sync.Mutex
	states     map[string]*oauth.State // loaded or saved
	modTimes   map[string]time.Time    // of the file each state was read from or written to
	challenges map[string]oauth.Challenge
	refreshing map[string]chan struct{} // a server's refresh under way: held (a send) while it runs
}

func newAuthStore(dir string) *authStore {
	return &authStore{dir: dir, states: map[string]*oauth.State{}, modTimes: map[string]time.Time{}, challenges: map[string]oauth.Challenge{},
		refreshing: map[string]chan struct{}{}}
}

func (a *authStore) path(server string) string { return filepath.Join(a.dir, server+".json") }

// state returns a copy of server's state (nil: not logged in).
func (a *authStore) state(server string) *oauth.State {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.states[server]
	if a.dir != "" {
		// Read again when the file changed: a login by `volcanicbot
		// login` while the bot runs.
		if fi, err := os.Stat(a.path(server)); err == nil && !fi.ModTime().Equal(a.modTimes[server]) {
			if raw, err := os.ReadFile(a.path(server)); err == nil {
				var loaded oauth.State
				if json.Unmarshal(raw, &loaded) == nil {
					st = &loaded
					a.states[server], a.modTimes[server] = st, fi.ModTime()
				}
			}
		}
	}
	if st == nil {
		return nil
	}
	c := *st
	return &c
}

// save replaces server's state, on disk (0600, written whole then
// renamed) when there is a directory.
func (a *authStore) save(server string, st *oauth.State) error {
	c := *st
	a.mu.Lock()
	defer a.mu.Unlock()
	a.states[server] = &c
	if a.dir == "" {
		return nil
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	if err := a.writeFile(a.path(server), raw); err != nil {
		return err
	}
	if fi, err := os.Stat(a.path(server)); err == nil {
		a.modTimes[server] = fi.ModTime()
	}
	return nil
}

// writeFile replaces path with raw: 0600 whatever the umask or the file
// before, in the 0700 directory, written whole in a file beside it and
// renamed (never half a file, and never a token in the temp directory).
//
// Run as root beside a bot of another user (`docker exec … volcanicbot
// login`, which runs as root in the image), the folder and the file are
// given the owner of the folder's parent, the data directory: the bot
// must read the token, and write the next.
func (a *authStore) writeFile(path string, raw []byte) error {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return err
	}
	own, err := store.OwnerOf(filepath.Dir(a.dir))
	if err != nil {
		return err
	}
	if err := own(a.dir); err != nil {
		return err
	}
	return store.WriteFile(path, raw, own)
}

// savedCatalog is server's last catalogue discovered with a token as a
// version before the catalogue store kept it (beside the token,
// <name>.tools.json), if any: offered while a login is needed until the
// store has one.
func (a *authStore) savedCatalog(server string) (Catalog, bool) {
	if a.dir == "" || !mcpconfig.ValidServerName(server) { // an internal name only: never a path
		return Catalog{}, false
	}
	path := filepath.Join(a.dir, server+".tools.json")
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxStoredCatalog {
		return Catalog{}, false
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Catalog{}, false
	}
	var cat Catalog
	if json.Unmarshal(raw, &cat) != nil || cat.Server != server {
		return Catalog{}, false
	}
	return cat, true
}

func (a *authStore) noteChallenge(server string, ch oauth.Challenge) {
	a.mu.Lock()
	a.challenges[server] = ch
	a.mu.Unlock()
}

func (a *authStore) challenge(server string) oauth.Challenge {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.challenges[server]
}

// reason is why server, logged in once, needs a login again: the refused
// refresh that dropped its tokens (kept in its state, so across restarts),
// or "".
func (a *authStore) reason(server string) string {
	if st := a.state(server); st != nil && !st.LoggedIn() {
		return st.Dropped
	}
	return ""
}

// token is server's access token for a request, refreshed (and saved)
// when it expired: one refresh at a time per server, so that a rotating
// refresh token is used once. A refresh the authorization server refuses
// drops the tokens (the registration stays): the server needs a login, and
// no later request tries that refresh again. Any other failure keeps them
// for the next request to try.
func (a *authStore) token(ctx context.Context, server string, hc *http.Client) (string, error) {
	a.mu.Lock()
	lock, ok := a.refreshing[server]
	if !ok {
		lock = make(chan struct{}, 1)
		a.refreshing[server] = lock
	}
	a.mu.Unlock()
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-lock }()

	st := a.state(server) // again: a refresh that held the lock may have saved a new one
	token, changed, err := st.Token(ctx, hc)
	switch {
	case err != nil && oauth.Refused(err):
		st.DropTokens()
		st.Dropped = err.Error()
		_ = a.save(server, st) // unsaved, the next request is refused the same way
		return "", err
	case err != nil:
		return "", err
	case changed:
		_ = a.save(server, st) // unsaved, the next request refreshes again
	}
	return token, nil
}

// authTransport puts the server's access token on its requests (refreshed
// when it expired), unless the entry's headers carry an Authorization of
// their own, and turns a Bearer challenge into a NeedsLoginError.
type authTransport struct {
	base   http.RoundTripper
	store  *authStore
	server string
	origin string
	plain  *http.Client // for the refresh: none of the server's headers
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if originOf(r.URL) != t.origin || r.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(r)
	}
	sent := false
	if t.store.state(t.server).LoggedIn() {
		token, err := t.store.token(r.Context(), t.server, t.plain)
		switch {
		case err == nil:
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
			sent = true
		case !oauth.Refused(err) && !errors.Is(err, oauth.ErrNoToken):
			// The authorization server is down for now: the tokens stay,
			// and the next request refreshes.
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, fmt.Errorf("%s: %s", t.server, chat.CapText(singleLine(err.Error()), maxLoginError))
		}
		// Refused (by this request's refresh or another's): the tokens
		// are gone; sent without one, the request gets the server's
		// challenge for the next login.
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return resp, nil
	}
	ch, ok := oauth.ParseChallenge(resp.Header)
	if !ok || (resp.StatusCode == http.StatusForbidden && !ch.InsufficientScope()) {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	t.store.noteChallenge(t.server, ch)
	nl := &NeedsLoginError{Server: t.server, StepUp: resp.StatusCode == http.StatusForbidden, Scope: ch.Scope}
	switch {
	case nl.StepUp:
	case !sent:
		nl.Reason = t.store.reason(t.server)
	default:
		nl.Reason = "the server refused its token"
		if ch.Error != "" {
			nl.Reason += " (" + chat.CapText(singleLine(ch.Error), 64) + ")"
		}
	}
	return nil, nl
}

// Login is an OAuth login to a url server under way: the admin opens URL,
// logs in, and hands Finish the address the browser ended on (or the code
// it shows).
type Login struct {
	URL string

	client *Client
	cfg    mcpconfig.ServerConfig
	flow   *oauth.Flow
}

// Login starts a login to the server name (a server at a URL): its
// authorization server is discovered and the bot registered with it if
// need be. redirectURL is where the authorization server sends the
// browser back (the bot's callback, or an address the admin copies). The
// entry's oauth fields are expanded like its headers (${VAR},
// ${VAR:-default}, ${env:NAME}). What goes wrong is one line naming the
// reason, with no secret in it.
func (c *Client) Login(ctx context.Context, name, redirectURL string) (*Login, error) {
	cfg, ok := c.Server(name)
	if !ok {
		return nil, c.unknownServer(name)
	}
	name = cfg.Name
	sp, err := cfg.Expand(mcpconfig.Dirs{}, c.sp.env)
	if err != nil || sp.URL == "" {
		return nil, fmt.Errorf("%s is not a server at a URL: it has no login", name)
	}
	flow, err := oauth.Begin(ctx, oauth.Config{ServerURL: sp.URL, ClientID: sp.OAuth.ClientID, ClientSecret: sp.OAuth.ClientSecret,
		ClientMetadataURL: sp.OAuth.ClientMetadataURL, ClientName: c.sp.client.Name, RedirectURL: redirectURL,
		Scopes: sp.OAuth.Scopes, HTTP: &http.Client{Timeout: 30 * time.Second}}, c.auth.state(name), c.auth.challenge(name))
	if err != nil {
		return nil, c.loginError(name, err)
	}
	return &Login{URL: flow.URL, client: c, cfg: cfg, flow: flow}, nil
}

// maxLoginError caps a login's error: one line to read in a chat.
const maxLoginError = 500

// LoginError is a login that failed. Reason is one line, with the known
// secrets redacted and cut to a length a chat reads: what to tell the
// admin, after the server's name.
type LoginError struct {
	Server, Reason string
}

func (e *LoginError) Error() string { return e.Server + ": login: " + e.Reason }

// UserMessage is the reason, for the chat (chat.UserMessage).
func (e *LoginError) UserMessage() string { return e.Reason }

// loginError is err as the admin reads it (a *LoginError). The oauth
// package's errors quote what a server sent on one line, cut, with the
// login's own secrets scrubbed; the redactor adds the bot's other known
// secrets.
func (c *Client) loginError(name string, err error) error {
	return &LoginError{Server: name, Reason: chat.CapText(singleLine(c.sp.redactor.Redact(err.Error())), maxLoginError)}
}

// singleLine is s with its line breaks and other control characters as
// spaces.
func singleLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// State is the login's state parameter, which the redirect back carries:
// a callback finds the login by it.
func (l *Login) State() string { return l.flow.State() }

// Finish completes the login with the address the browser ended on (or
// the bare code): the token is saved, and the server discovered again.
// What goes wrong is one line (see Client.Login), and leaves the server as
// it was.
func (l *Login) Finish(ctx context.Context, redirected string) error {
	st, err := l.flow.Finish(ctx, redirected)
	if err != nil {
		return l.client.loginError(l.cfg.Name, err)
	}
	if err := l.client.auth.save(l.cfg.Name, st); err != nil {
		return l.client.loginError(l.cfg.Name, fmt.Errorf("saving the token failed: %w", err))
	}
	l.client.auth.noteChallenge(l.cfg.Name, oauth.Challenge{})
	l.client.cache.forget(l.cfg)
	return nil
}

// LoggedIn reports whether the server name holds a token.
func (c *Client) LoggedIn(name string) bool { return c.auth.state(name).LoggedIn() }

// needsLogin reports whether err is a server's request for a login.
func needsLogin(err error) (*NeedsLoginError, bool) {
	var nl *NeedsLoginError
	ok := errors.As(err, &nl)
	return nl, ok
}

// loginToolName is the MCP name of the tool a server that was never
// logged in offers (see loginCatalog); exposed as <server>_login.
const loginToolName = "login"

// loginCatalog is what a server that needs a login and has no tools from
// an earlier one offers: a single tool saying how to log in. Without it
// the model would not know the server is there, and would tell the user
// it cannot do what the server is for.
func loginCatalog(cfg mcpconfig.ServerConfig) Catalog {
	prefix := cfg.ToolPrefix
	if prefix == "" {
		prefix = cfg.Name + "_"
	}
	t := Tool{MCPName: loginToolName, kind: loginKind{}, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Description: fmt.Sprintf("The %s MCP server needs an OAuth login before it offers its tools. Call this when the user "+
			"wants something %s is for: it says how to log in (an admin sends /mcp login %s in Telegram). It does nothing else.",
			cfg.Name, cfg.Name, cfg.Name),
		Annotations: chat.Annotations{ReadOnlyHint: new(true)}}
	return Catalog{Server: cfg.Name, Tools: ExposeTools(cfg.Name, prefix, []Tool{t})}
}

// loginResult is a call of a login tool: the login still needed, or that
// it is done.
func (c *Client) loginResult(tool Tool) Result {
	for _, sc := range c.Lookup() {
		if sc.Config.Name != tool.Server {
			continue
		}
		if nl, ok := needsLogin(sc.Err); ok {
			return ErrorResult(tool.Server, tool.Name, nl.Error())
		}
	}
	if c.LoggedIn(tool.Server) {
		return Result{Server: tool.Server, Tool: tool.Name, Content: []chat.Part{{Kind: chat.TextPart,
			Text: tool.Server + " is logged in now: its tools are offered from the next message on."}}}
	}
	return ErrorResult(tool.Server, tool.Name, (&NeedsLoginError{Server: tool.Server}).Error())
}
