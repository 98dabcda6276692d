package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
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
	logs := &syncBuffer{}
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
	s, _ := client.NewSession(t.TempDir())
	defer s.Close()
	if txt := s.StatusText(); !strings.Contains(txt, "needs login") {
		t.Errorf("/mcp:\n%s", txt)
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
	if err := login.Finish(ctx, back); err == nil || !strings.Contains(err.Error(), "invalid_grant the code expired") || strings.Contains(err.Error(), "\n") {
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
	dir := filepath.Join(t.TempDir(), "mcp-auth")
	newClient := func() *Client {
		c := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()), AuthDir: dir})
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
	if !errors.As(cats[0].Err, &nl) {
		t.Fatalf("discovery: %v, want needs login", cats[0].Err)
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
	s, _ := client.NewSession(t.TempDir())
	defer s.Close()
	res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "remote needs login (OAuth): an admin sends /mcp login remote") {
		t.Errorf("a call: %q (%v)", res.Text(), err)
	}
	if txt := s.StatusText(); !strings.Contains(txt, "needs login") || !strings.Contains(txt, "tools from the last login say so when called") {
		t.Errorf("/mcp:\n%s", txt)
	}
	if fi, err := os.Stat(filepath.Join(dir, "remote.tools.json")); err != nil || fi.Mode().Perm() != 0o600 {
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
	if lt.Name != "remote_login" || lt.Server != "remote" || !lt.LoginOnly || !strings.Contains(lt.Description, "/mcp login remote") {
		t.Fatalf("the login tool: %+v", lt)
	}
	s, _ := client.NewSession(t.TempDir())
	defer s.Close()
	res, err := s.Call(ctx, lt, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "remote needs login (OAuth): an admin sends /mcp login remote") {
		t.Fatalf("calling it: %q (%v)", res.Text(), err)
	}
	if txt := s.StatusText(); !strings.Contains(txt, "needs login") || strings.Contains(txt, "last login") {
		t.Errorf("/mcp:\n%s", txt)
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
		if tl.LoginOnly {
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
