package bot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// /mcp login <name>, from an admin: the link goes to the chat, and the
// admin's next message is the login's answer (never delivered to the
// model); a failed answer says why; another user's message is theirs;
// a non-admin is refused.
func TestMCPLoginFromTheChat(t *testing.T) {
	h := startBot(t, func(o *testOptions) { o.Admins = []int64{alice} })
	h.fake.Message(alice, alice, "/mcp login remote")
	link := h.texts(t, alice, 1)[0]
	if !strings.Contains(link, "https://auth.example/authorize?state=s1") || !strings.Contains(link, "send it here as your next message") {
		t.Fatalf("the login's message:\n%s", link)
	}
	h.fake.Message(alice, alice, "no code here")
	if got := h.texts(t, alice, 2)[1]; got != `The login to remote failed: no code in "no code here". Send /mcp login remote to try again.` {
		t.Errorf("a bad answer: %q", got)
	}
	h.fake.Message(alice, alice, "/mcp login remote")
	h.texts(t, alice, 3)
	h.fake.Message(alice, alice, "http://127.0.0.1:8976/callback?code=c1&state=s1")
	if got := h.texts(t, alice, 4)[3]; got != "remote: logged in. Its tools are offered from the next message on." {
		t.Errorf("the answer: %q", got)
	}
	h.fake.Message(alice, alice, "hello")
	h.sess.waitCalls(t, "deliver", 1)
	calls := h.sess.Calls()
	want := []string{"login remote", "finish no code here", "login remote", "finish http://127.0.0.1:8976/callback?code=c1&state=s1", "deliver 1001 hello"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}

	h.fake.Message(bob, bob, "/mcp login remote")
	if got := h.texts(t, bob, 1)[0]; !strings.HasPrefix(got, "Only the bot's admins") {
		t.Errorf("a non-admin: %q", got)
	}
	h.fake.Message(alice, alice, "/mcp login nope")
	if got := h.texts(t, alice, 5)[4]; !strings.Contains(got, "nope is not a server at a URL") {
		t.Errorf("a command server: %q", got)
	}
}

// With a public callback (the webhook's origin), /mcp login has the
// browser come back to the bot, which finishes the login and tells the
// chat; a replayed or unknown state is refused.
func TestMCPLoginCallback(t *testing.T) {
	const callback = "https://bot.example/mcp/oauth/callback"
	h := startBot(t, func(o *testOptions) { o.Admins = []int64{alice}; o.LoginCallback = callback })
	if p := h.bot.LoginCallbackPath(); p != "/mcp/oauth/callback" {
		t.Fatalf("path %q", p)
	}
	h.fake.Message(alice, alice, "/mcp login remote")
	if got := h.texts(t, alice, 1)[0]; !strings.Contains(got, "comes back to me") {
		t.Fatalf("the login's message:\n%s", got)
	}
	serve := func(query string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.bot.LoginCallbackHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/mcp/oauth/callback?"+query, nil))
		return w
	}
	if w := serve("code=c1&state=s1"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "logged in to remote") {
		t.Errorf("the callback: %d %s", w.Code, w.Body.String())
	}
	if got := h.texts(t, alice, 2)[1]; got != "remote: logged in. Its tools are offered from the next message on." {
		t.Errorf("the chat: %q", got)
	}
	if w := serve("code=c1&state=s1"); w.Code != http.StatusBadRequest {
		t.Errorf("a replay: %d %s", w.Code, w.Body.String())
	}
	if calls := h.sess.Calls(); !slices.Contains(calls, "login remote "+callback) || !slices.Contains(calls, "finish "+callback+"?code=c1&state=s1") {
		t.Errorf("calls %q", calls)
	}
}

// What the admin sees in the chat when a login goes wrong — the
// authorization server's metadata malformed, the answer pasted back for
// another login, the code expired or used, the token endpoint failing or
// quoting the request — is one line naming the reason, with none of the
// login's secrets (the client's secret, the code, the verifier) in it or
// in the log; the server still needs a login, no token file is written,
// and the pasted answer never reaches the model.
func TestMCPLoginFailuresInTheChat(t *testing.T) {
	const secret = "cs-chat-0123456789abcdef"
	link := regexp.MustCompile(`(?m)^(http\S+/authorize\S+)$`)
	for _, tc := range []struct {
		name   string
		fault  fakemcp.Fault
		before func(o *fakemcp.OAuthServer)
		back   func(string) string
		want   string // the whole line, past "The login to remote failed: " (or the start's "Sorry: remote: login: ")
	}{
		{name: "server metadata is HTML", fault: fakemcp.ServerMetadataHTML,
			want: "Sorry: remote: login: no authorization server metadata for {URL}: malformed metadata: {URL}/.well-known/oauth-authorization-server is an HTML page, not JSON"},
		{name: "resource metadata names no authorization server", fault: fakemcp.ResourceMetadataNoServers,
			want: "Sorry: remote: login: the protected-resource metadata names no authorization server"},
		{name: "wrong state", back: func(b string) string { return strings.Replace(b, "state=", "state=x", 1) },
			want: "The login to remote failed: the answer is not for this login (wrong state). Send /mcp login remote to try again."},
		{name: "expired code", before: (*fakemcp.OAuthServer).ExpireCodes,
			want: "The login to remote failed: the token endpoint refused the code: invalid_grant (the code expired). Send /mcp login remote to try again."},
		{name: "used code", before: (*fakemcp.OAuthServer).SpendCodes,
			want: "The login to remote failed: the token endpoint refused the code: invalid_grant (the code was already used). Send /mcp login remote to try again."},
		{name: "token endpoint 500", before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenHTML) },
			want: "The login to remote failed: exchanging the code for a token failed: HTTP 500 (an HTML page). Send /mcp login remote to try again."},
		{name: "token endpoint huge", before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenHuge) },
			want: "The login to remote failed: exchanging the code for a token failed: HTTP 400 (an answer of over 1 MiB). Send /mcp login remote to try again."},
		{name: "token error quoting the secrets", before: func(o *fakemcp.OAuthServer) { o.SetFault(fakemcp.TokenEcho) },
			want: "The login to remote failed: the token endpoint refused the code: invalid_request (refused code=[REDACTED] code_verifier=[REDACTED] refresh_token= client_secret=[REDACTED] refused code=[REDACTED]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := fakemcp.NewOAuthServer(t)
			o.AddClient("pre-1", secret)
			dir := filepath.Join(t.TempDir(), "mcp-auth")
			cfg := mcpconfig.ServerConfig{Name: "remote", Source: mcpconfig.SourceSettings, Origin: "test", URL: o.URL + "/mcp", Enabled: true,
				StartupTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, OAuth: mcpconfig.OAuthConfig{ClientID: "pre-1", ClientSecret: secret}}
			secrets := redact.NewRegistry()
			secrets.Add(secret)
			client := mcpclient.New(mcpclient.Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()),
				Redactor: secrets, AuthDir: dir})
			t.Cleanup(client.Close)
			h := startBot(t, func(opt *testOptions) { opt.Admins = []int64{alice}; opt.Redactor = secrets })
			h.sess.mu.Lock()
			h.sess.mcpLogin = func(ctx context.Context, name, redirect string) (*session.MCPLogin, error) {
				if redirect == "" {
					redirect = session.LoginRedirect
				}
				l, err := client.Login(ctx, name, redirect)
				if err != nil {
					return nil, err
				}
				return session.NewMCPLogin(l.URL, l.State(), l.Finish), nil
			}
			h.sess.mu.Unlock()
			o.SetFault(tc.fault)

			h.fake.Message(alice, alice, "/mcp login remote")
			first := h.texts(t, alice, 1)[0]
			got, back := first, ""
			if m := link.FindStringSubmatch(first); m != nil {
				back = fakemcp.Browse(t, m[1])
				if tc.before != nil {
					tc.before(o)
				}
				if tc.back != nil {
					back = tc.back(back)
				}
				h.fake.Message(alice, alice, back)
				got = h.texts(t, alice, 2)[1]
			}
			want := strings.ReplaceAll(tc.want, "{URL}", o.URL)
			if !strings.HasPrefix(got, want) || strings.Contains(got, "\n") || len(got) > 700 {
				t.Errorf("the chat got (%d bytes):\n%s\nwant one line starting\n%s", len(got), got, want)
			}
			leaks := []string{secret}
			if u, err := url.Parse(back); err == nil {
				leaks = append(leaks, u.Query().Get("code"))
			}
			for _, f := range o.TokenRequests() {
				leaks = append(leaks, f.Get("code"), f.Get("code_verifier"))
			}
			for _, s := range leaks {
				if s != "" && (strings.Contains(got, s) || strings.Contains(h.logs.String(), s)) {
					t.Errorf("the chat or the log has the secret %q:\n%s\n%s", s, got, h.logs.String())
				}
			}
			if client.LoggedIn("remote") {
				t.Error("logged in")
			}
			if _, err := os.Stat(filepath.Join(dir, "remote.json")); !os.IsNotExist(err) {
				t.Errorf("a token file: %v", err)
			}
			if calls := h.sess.callsWith("deliver"); len(calls) > 0 {
				t.Errorf("the answer reached the model: %q", calls)
			}
		})
	}
}
