package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A server that wants OAuth: discovery says needs login; a login (PKCE,
// resource indicator, dynamic registration) stores the token in a 0600
// file and the server is discovered again; a call that needs more scopes
// says so, and a second login with them lets it run; an expired token is
// refreshed; no token reaches the log.
func TestOAuthLogin(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	dir := t.TempDir()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()), Logger: logger,
		AuthDir: filepath.Join(dir, "mcp-auth")})
	t.Cleanup(client.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	cats := client.Discover(ctx)
	var nl *NeedsLoginError
	if !errors.As(cats[0].Err, &nl) || nl.StepUp {
		t.Fatalf("discovery: %v, want needs login", cats[0].Err)
	}
	s, _ := client.NewSession(t.TempDir(), t.TempDir())
	defer s.Close()
	if st := statusOf(t, s, "remote"); st.Login == nil {
		t.Errorf("/mcp: %+v", st)
	}

	const redirect = "http://127.0.0.1:9/callback"
	login, err := client.Login(ctx, "remote", redirect)
	if err != nil {
		t.Fatal(err)
	}
	back := fakemcp.Browse(t, login.URL)
	q := o.AuthQuery()
	if q.Get("resource") != o.URL+"/mcp" || q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "client-1" ||
		q.Get("scope") != "mcp:read offline_access" || q.Get("redirect_uri") != redirect {
		t.Errorf("authorization request %v", q)
	}
	if err := login.Finish(ctx, back); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp-auth", "remote.json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want 0600", fi, err)
	}
	cats = client.Discover(ctx)
	if cats[0].Err != nil || len(cats[0].Catalog.Tools) == 0 {
		t.Fatalf("discovery after the login: %v", cats[0].Err)
	}

	echo := Tool{Server: "remote", MCPName: fakemcp.ToolEcho, Name: fakemcp.ToolEcho}
	res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError || !strings.HasPrefix(res.Text(), "remote needs a login with more permissions") ||
		strings.Contains(res.Text(), "failed to send") || strings.Contains(res.Text(), "reconnects") {
		t.Fatalf("a call without mcp:write: %q (%v)", res.Text(), err)
	}
	if st, _ := s.Status("remote"); st.State == StateDisconnected {
		t.Errorf("the refused call ended the connection: %v", st.State)
	}
	if st := statusOf(t, s, "remote"); !st.ScopeShort || st.Scope != "mcp:read mcp:write" || st.Ref != "remote" {
		t.Errorf("/mcp after a call refused for its scope: %+v", st)
	}
	login, err = client.Login(ctx, "remote", redirect)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(login.URL); !strings.Contains(u.Query().Get("scope"), "mcp:write") {
		t.Errorf("the step-up asks for %q", u.Query().Get("scope"))
	}
	o.SetExpiresIn(1) // expired at once (x/oauth2 allows 10 s): the next request refreshes it
	if err := login.Finish(ctx, fakemcp.Browse(t, login.URL)); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`)); err != nil || res.IsError || res.Text() != "hi" {
		t.Fatalf("the call after the step-up: %q (%v)", res.Text(), err)
	}
	if st := statusOf(t, s, "remote"); st.ScopeShort {
		t.Errorf("/mcp after the step-up login: %+v", st)
	}
	forms := o.TokenRequests()
	last := forms[len(forms)-1]
	if last.Get("grant_type") != "refresh_token" {
		t.Errorf("the expired token was not refreshed: last token request %v", last)
	}
	raw, _ := os.ReadFile(path)
	var st struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(raw, &st)
	if st.AccessToken == "" || strings.Contains(logs.String(), st.AccessToken) || strings.Contains(logs.String(), "refresh-") {
		t.Errorf("the token %q is in the log, or not in the file", st.AccessToken)
	}
}

// What goes wrong in a login is one line, and leaves the server needing
// it: a wrong state, a token endpoint's error, metadata for another
// issuer.
func TestOAuthLoginFailures(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ())})
	t.Cleanup(client.Close)
	ctx := t.Context()
	login, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	back := fakemcp.Browse(t, login.URL)
	forged := strings.Replace(back, "state=", "state=x", 1)
	if err := login.Finish(ctx, forged); err == nil || !strings.Contains(err.Error(), "wrong state") {
		t.Errorf("a wrong state: %v", err)
	}
	otherIss := strings.Replace(back, "iss=", "iss=x", 1)
	if err := login.Finish(ctx, otherIss); err == nil || !strings.Contains(err.Error(), "another authorization server") {
		t.Errorf("a wrong iss: %v", err)
	}
	o.SetTokenError("invalid_grant")
	if err := login.Finish(ctx, back); err == nil || !strings.Contains(err.Error(), "invalid_grant (the code expired)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a token error: %v", err)
	}
	if client.LoggedIn("remote") {
		t.Error("logged in after failures")
	}
}

// A server logged in once and needing a login again (its token revoked)
// keeps offering the tools of its last catalogue, across a restart of the
// bot; a call says a login is needed, and /mcp says so.
func TestNeedsLoginKeepsTheTools(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	data := t.TempDir()
	dir, catalogs := filepath.Join(data, "mcp-auth"), filepath.Join(data, "mcp-catalog")
	newClient := func() *Client {
		c := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()), AuthDir: dir,
			CatalogDir: catalogs})
		t.Cleanup(c.Close)
		return c
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	first := newClient()
	login, err := first.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	if err := login.Finish(ctx, fakemcp.Browse(t, login.URL)); err != nil {
		t.Fatal(err)
	}
	if cats := first.Discover(ctx); cats[0].Err != nil {
		t.Fatal(cats[0].Err)
	}
	first.Close()

	o.Revoke()
	client := newClient()
	cats := client.Discover(ctx)
	var nl *NeedsLoginError
	if !errors.As(cats[0].Err, &nl) || nl.Reason != "the server refused its token" {
		t.Fatalf("discovery: %v, want needs login because the token was refused", cats[0].Err)
	}
	tools, _ := client.Tools(ctx)
	var echo Tool
	for _, tl := range tools {
		if tl.MCPName == fakemcp.ToolEcho {
			echo = tl
		}
	}
	if echo.Server != "remote" {
		t.Fatalf("the tools of the last login are gone: %d tools", len(tools))
	}
	s, _ := client.NewSession(t.TempDir(), t.TempDir())
	defer s.Close()
	res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "remote needs login (OAuth): an admin sends /mcp login remote") {
		t.Errorf("a call: %q (%v)", res.Text(), err)
	}
	if st := statusOf(t, s, "remote"); st.Login == nil || st.Login.Tools == 0 {
		t.Errorf("/mcp: %+v", st)
	}
	if fi, err := os.Stat(filepath.Join(catalogs, "remote.tools.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the saved catalogue: %v (%v)", fi, err)
	}
}

// A server that was never logged in offers one tool, which says how to
// log in when called (the model would otherwise not know the server is
// there); after the login its own tools replace it, and the placeholder a
// chat still holds says the login is done.
func TestNeverLoggedInOffersALoginTool(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()),
		AuthDir: filepath.Join(t.TempDir(), "mcp-auth")})
	t.Cleanup(client.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	tools, refusals := client.Tools(ctx)
	if len(tools) != 1 || len(refusals) != 0 {
		t.Fatalf("tools %v, refusals %v: want the login tool alone", tools, refusals)
	}
	lt := tools[0]
	if _, login := lt.kind.(loginKind); lt.Name != "remote_login" || lt.Server != "remote" || !login || !strings.Contains(lt.Description, "/mcp login remote") {
		t.Fatalf("the login tool: %+v", lt)
	}
	s, _ := client.NewSession(t.TempDir(), t.TempDir())
	defer s.Close()
	if _, guarded := s.Tool(lt).(chat.Guarded); guarded {
		t.Error("the login tool asks for approval: it only says how to log in")
	}
	res, err := s.Call(ctx, lt, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "remote needs login (OAuth): an admin sends /mcp login remote") {
		t.Fatalf("calling it: %q (%v)", res.Text(), err)
	}
	if st := statusOf(t, s, "remote"); st.Login == nil || st.Login.Tools != 0 {
		t.Errorf("/mcp: %+v", st)
	}

	login, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	if err := login.Finish(ctx, fakemcp.Browse(t, login.URL)); err != nil {
		t.Fatal(err)
	}
	tools, _ = client.Tools(ctx)
	for _, tl := range tools {
		if _, login := tl.kind.(loginKind); login {
			t.Errorf("the login tool is still offered after the login: %+v", tl)
		}
	}
	if len(tools) == 0 {
		t.Error("no tools after the login")
	}
	res, err = s.Call(ctx, lt, json.RawMessage(`{}`))
	if err != nil || res.IsError || !strings.Contains(res.Text(), "remote is logged in now") {
		t.Errorf("the placeholder after the login: %q (%v)", res.Text(), err)
	}
}

// maxLoginErrorForTests is what a login's error may be at most: one line,
// short enough to read in a chat.
const maxLoginErrorForTests = 600

// oauthClient is a client of the fake's MCP endpoint (as "remote", edited
// by edit), its OAuth state in dir.
func oauthClient(t *testing.T, o *fakemcp.OAuthServer, dir string, environ []string, edit func(*mcpconfig.ServerConfig)) *Client {
	t.Helper()
	cfg := httpConfig("remote", o.URL+"/mcp", nil)
	if edit != nil {
		edit(&cfg)
	}
	c := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(environ), AuthDir: dir})
	t.Cleanup(c.Close)
	return c
}

// Bad input from the authorization server or the browser: each gives one
// line naming the reason, with no secret in it (the client's secret, the
// code, the verifier), and leaves the server needing a login — not logged
// in, /mcp says so, no token file.
func TestOAuthLoginBadInput(t *testing.T) {
	const secret = "cs-0123456789abcdef-secret"
	preRegistered := func(id, secret string) func(*mcpconfig.ServerConfig) {
		return func(c *mcpconfig.ServerConfig) { c.OAuth = mcpconfig.OAuthConfig{ClientID: id, ClientSecret: secret} }
	}
	cases := []struct {
		name     string
		fault    fakemcp.Fault
		edit     func(*mcpconfig.ServerConfig)
		before   func(o *fakemcp.OAuthServer) // between the browser's redirect and Finish
		back     func(string) string          // the address pasted instead of the redirect
		beginErr string                       // Login's error, or
		err      string                       // Finish's
	}{
		{name: "resource metadata is HTML", fault: fakemcp.ResourceMetadataHTML, beginErr: "an HTML page, not JSON"},
		{name: "resource metadata names no authorization server", fault: fakemcp.ResourceMetadataNoServers, beginErr: "names no authorization server"},
		{name: "resource metadata for another resource", fault: fakemcp.ResourceMetadataOtherResource, beginErr: `is for "https://elsewhere.example/mcp"`},
		{name: "server metadata is HTML", fault: fakemcp.ServerMetadataHTML, beginErr: "an HTML page, not JSON"},
		{name: "server metadata without endpoints", fault: fakemcp.ServerMetadataNoEndpoints, beginErr: "no authorization_endpoint"},
		{name: "server metadata of another issuer", fault: fakemcp.ServerMetadataOtherIssuer, beginErr: `for the issuer "https://evil.example"`},
		{name: "no PKCE S256", fault: fakemcp.ServerMetadataNoPKCE, beginErr: "does not support PKCE with S256"},
		{name: "metadata URL not https once expanded", edit: func(c *mcpconfig.ServerConfig) {
			c.OAuth.ClientMetadataURL = "${VOLCANIC_TEST_UNSET_CIMD:-http://bot.example/c.json}"
		}, beginErr: `oauthClientMetadataUrl "http://bot.example/c.json" is not an https URL`},
		{name: "wrong state", back: func(b string) string { return strings.Replace(b, "state=", "state=x", 1) }, err: "wrong state"},
		{name: "wrong iss", back: func(b string) string { return strings.Replace(b, "iss=", "iss=x", 1) }, err: "another authorization server"},
		{name: "not an answer", back: func(string) string { return "http://127.0.0.1:9/callback?foo=bar" }, err: "wrong state"},
		{name: "unknown client", edit: preRegistered("nobody", ""), err: "the authorization server refused: unauthorized_client (unknown client_id)"},
		{name: "expired code", before: (*fakemcp.OAuthServer).ExpireCodes, err: "the token endpoint refused the code: invalid_grant (the code expired)"},
		{name: "used code", before: (*fakemcp.OAuthServer).SpendCodes, err: "the token endpoint refused the code: invalid_grant (the code was already used)"},
		{name: "wrong client secret", edit: preRegistered("pre-1", "wrong-"+secret), err: "invalid_client (unknown client, or a wrong secret)"},
		{name: "token error", before: func(o *fakemcp.OAuthServer) { o.SetTokenError("temporarily_unavailable") }, err: "temporarily_unavailable (the code expired)"},
		{name: "token endpoint 500 HTML", before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenHTML) }, err: "HTTP 500 (an HTML page)"},
		{name: "token endpoint huge answer", before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenHuge) }, err: "HTTP 400 (an answer of over 1 MiB)"},
		{name: "token error quoting secrets", edit: preRegistered("pre-1", secret),
			before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenEcho) }, err: "invalid_request (refused code=[REDACTED] code_verifier=[REDACTED]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := fakemcp.NewOAuthServer(t)
			o.AddClient("pre-1", secret)
			dir := filepath.Join(t.TempDir(), "mcp-auth")
			client := oauthClient(t, o, dir, os.Environ(), tc.edit)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if cats := client.Discover(ctx); !errors.As(cats[0].Err, new(*NeedsLoginError)) {
				t.Fatalf("discovery: %v, want needs login", cats[0].Err)
			}
			o.SetFault(tc.fault)
			var err error
			var back string
			login, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
			if tc.beginErr != "" {
				if err == nil {
					t.Fatal("the login began")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				back = fakemcp.Browse(t, login.URL)
				if tc.before != nil {
					tc.before(o)
				}
				if tc.back != nil {
					back = tc.back(back)
				}
				err = login.Finish(ctx, back)
			}
			want := tc.beginErr + tc.err
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "remote: login: ") || strings.ContainsAny(msg, "\r\n") || len(msg) > maxLoginErrorForTests {
				t.Errorf("not one short line (%d bytes): %q", len(msg), msg)
			}
			secrets := []string{secret}
			if u, err := url.Parse(back); err == nil && u.Query().Get("code") != "" {
				secrets = append(secrets, u.Query().Get("code"))
			}
			for _, f := range o.TokenRequests() {
				secrets = append(secrets, f.Get("code"), f.Get("code_verifier"))
			}
			for _, s := range secrets {
				if s != "" && strings.Contains(msg, s) {
					t.Errorf("the error quotes the secret %q: %s", s, msg)
				}
			}
			if client.LoggedIn("remote") {
				t.Error("logged in")
			}
			s, _ := client.NewSession(t.TempDir(), t.TempDir())
			defer s.Close()
			if st := statusOf(t, s, "remote"); st.Login == nil {
				t.Errorf("/mcp: %+v", st)
			}
			if _, err := os.Stat(filepath.Join(dir, "remote.json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a token file: %v", err)
			}
		})
	}
}

// An expired token is refreshed with the resource indicator (RFC 8707);
// a refresh the authorization server refuses (invalid_grant) drops the
// tokens — the server needs a login, /mcp says why, and no request tries
// the refresh again; one that fails for a while (a 500) keeps them, fails
// the discovery with the reason, and the next one refreshes.
func TestOAuthRefresh(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "mcp-auth")
	client := oauthClient(t, o, dir, os.Environ(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rediscover := func() ServerCatalog { // a discovery now, whatever the last one found
		t.Helper()
		client.cache.forget(client.servers[0])
		return client.Discover(ctx)[0]
	}
	refreshes := func() []url.Values {
		var out []url.Values
		for _, f := range o.TokenRequests() {
			if f.Get("grant_type") == "refresh_token" {
				out = append(out, f)
			}
		}
		return out
	}
	login := func() {
		t.Helper()
		l, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx, fakemcp.Browse(t, l.URL)); err != nil {
			t.Fatal(err)
		}
	}

	o.SetExpiresIn(1) // expired at once: the first request refreshes
	login()
	if sc := rediscover(); sc.Err != nil {
		t.Fatalf("discovery with a refreshed token: %v", sc.Err)
	}
	r := refreshes()
	if len(r) == 0 {
		t.Fatal("no refresh")
	}
	if got := r[0].Get("resource"); got != o.URL+"/mcp" {
		t.Errorf("the refresh's resource %q, want %q (form %v)", got, o.URL+"/mcp", r[0])
	}

	// A refresh that fails for a while keeps the tokens.
	o.SetFault(fakemcp.TokenHTML)
	sc := rediscover()
	if sc.Err == nil || errors.As(sc.Err, new(*NeedsLoginError)) || !strings.Contains(sc.Err.Error(), "HTTP 500") || !client.LoggedIn("remote") {
		t.Fatalf("a refresh answered 500: %v (logged in %v)", sc.Err, client.LoggedIn("remote"))
	}
	o.SetFault(fakemcp.NoFault)
	if sc := rediscover(); sc.Err != nil {
		t.Fatalf("the next discovery: %v", sc.Err)
	}

	// A refused refresh drops them.
	o.Revoke()
	before := len(refreshes())
	sc = rediscover()
	var nl *NeedsLoginError
	if !errors.As(sc.Err, &nl) || !strings.Contains(sc.Err.Error(), "invalid_grant (the refresh token is not valid)") {
		t.Fatalf("a refused refresh: %v, want needs login with the reason", sc.Err)
	}
	if client.LoggedIn("remote") {
		t.Error("still logged in")
	}
	s, _ := client.NewSession(t.TempDir(), t.TempDir())
	defer s.Close()
	if st := statusOf(t, s, "remote"); st.Login == nil || !strings.Contains(st.Login.Reason, "invalid_grant") {
		t.Errorf("/mcp: %+v", st)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "remote.json"))
	if err != nil || strings.Contains(string(raw), "access_token") || strings.Contains(string(raw), "refresh_token") {
		t.Errorf("the file keeps the tokens: %s (%v)", raw, err)
	}
	rediscover()
	rediscover()
	if n := len(refreshes()) - before; n != 1 {
		t.Errorf("%d refreshes after the refusal, want 1", n)
	}
	// The reason outlives the bot: the next one's /mcp says it too.
	next := oauthClient(t, o, dir, os.Environ(), nil)
	if sc := next.Discover(ctx)[0]; !strings.Contains(fmt.Sprint(sc.Err), "invalid_grant (the refresh token is not valid)") {
		t.Errorf("after a restart: %v, want the reason", sc.Err)
	}
	login() // the registration was kept: no new one
	if sc := rediscover(); sc.Err != nil || !client.LoggedIn("remote") {
		t.Fatalf("after a new login: %v", sc.Err)
	}
}

// oauthClientId, oauthClientSecret and oauthClientMetadataUrl are expanded
// like headers: ${VAR}, ${VAR:-default}, ${env:NAME}.
func TestOAuthFieldsExpanded(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	o.AddClient("pre-7", "cs-from-the-env-0123456789")
	client := oauthClient(t, o, "", append(os.Environ(), "VOLCANIC_TEST_OAUTH_SECRET=cs-from-the-env-0123456789"),
		func(c *mcpconfig.ServerConfig) {
			c.OAuth = mcpconfig.OAuthConfig{ClientID: "${VOLCANIC_TEST_OAUTH_ID:-pre-7}", ClientSecret: "${env:VOLCANIC_TEST_OAUTH_SECRET}"}
		})
	ctx := t.Context()
	l, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	back := fakemcp.Browse(t, l.URL)
	if got := o.AuthQuery().Get("client_id"); got != "pre-7" {
		t.Errorf("client_id %q, want pre-7", got)
	}
	if err := l.Finish(ctx, back); err != nil {
		t.Fatal(err)
	}
	if !client.LoggedIn("remote") {
		t.Error("not logged in")
	}
}

// Requests that find the token expired at once refresh it once: a rotated
// refresh token is good once, and a second refresh with it would be
// refused and lose the login.
func TestOAuthRefreshOnce(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	client := oauthClient(t, o, "", os.Environ(), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	o.SetExpiresIn(1)
	l, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, fakemcp.Browse(t, l.URL)); err != nil {
		t.Fatal(err)
	}
	o.SetExpiresIn(3600)
	hc := &http.Client{Timeout: 10 * time.Second}
	const n = 8
	tokens := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { tokens[i], errs[i] = client.auth.token(ctx, "remote", hc) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || tokens[i] != tokens[0] {
			t.Errorf("request %d: %q (%v), want %q", i, tokens[i], errs[i], tokens[0])
		}
	}
	refreshes := 0
	for _, f := range o.TokenRequests() {
		if f.Get("grant_type") == "refresh_token" {
			refreshes++
		}
	}
	if refreshes != 1 || !client.LoggedIn("remote") {
		t.Errorf("%d refreshes (logged in %v), want 1", refreshes, client.LoggedIn("remote"))
	}
}

// Run as root (`docker exec volcanicbot volcanicbot login notes`, beside a
// bot of another user), a login leaves its folder and files the data
// directory's owner's: the bot can read the token and write the next.
func TestLoginAsRootKeepsTheBotsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	data := t.TempDir()
	if err := os.Chown(data, 10001, 10001); err != nil {
		t.Fatal(err)
	}
	o := fakemcp.NewOAuthServer(t)
	dir, catalogs := filepath.Join(data, "mcp-auth"), filepath.Join(data, "mcp-catalog")
	client := New(Options{Servers: []mcpconfig.ServerConfig{httpConfig("remote", o.URL+"/mcp", nil)},
		Env: redact.NewEnvFilter(os.Environ()), AuthDir: dir, CatalogDir: catalogs})
	t.Cleanup(client.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	login, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	if err := login.Finish(ctx, fakemcp.Browse(t, login.URL)); err != nil {
		t.Fatal(err)
	}
	if cats := client.Discover(ctx); cats[0].Err != nil {
		t.Fatal(cats[0].Err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "remote.json"), catalogs, filepath.Join(catalogs, "remote.tools.json")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 10001 || st.Gid != 10001 {
			t.Errorf("%s is %d:%d, want the data directory's 10001:10001", p, st.Uid, st.Gid)
		}
	}
}
